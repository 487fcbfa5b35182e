// Links a page's script builds: GENUI_LINK("/runs/x") is that absolute path on the served viewer, and in a static
// export (python -m runner.view --export) the relative path to the written file (.../runs/x/index.html).
(function () {
  "use strict";
  var body = document.body;
  var exported = body.getAttribute("data-static") === "true";
  var root = body.getAttribute("data-site-root") || "/";
  window.GENUI_LINK = function (path) {
    if (!exported) return path;
    var clean = path.replace(/^\/+/, "").replace(/\/+$/, "");
    return root + (clean ? clean + "/" : "") + "index.html";
  };
  window.GENUI_STATIC = exported;
})();
