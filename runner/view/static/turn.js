// Turn detail: the left and right arrow keys go to the previous and next turn (the page's own rel links),
// unless the reader is typing or holds a modifier.
(function () {
  "use strict";
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
    var target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) return;
    var rel = event.key === "ArrowLeft" ? "prev" : event.key === "ArrowRight" ? "next" : null;
    if (!rel) return;
    var link = document.querySelector('a[rel="' + rel + '"]');
    if (link) {
      event.preventDefault();
      window.location.assign(link.getAttribute("href"));
    }
  });
})();
