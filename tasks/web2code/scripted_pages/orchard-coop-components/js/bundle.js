/* orchard-coop bundle: a tiny component runtime and the page's components, concatenated into one file. */
(function () {
  "use strict";
  // --- runtime ---------------------------------------------------------------------------------------
  function h(tag, props, children) {
    var el = document.createElement(tag);
    Object.keys(props || {}).forEach(function (key) {
      if (key === "className") el.className = props[key];
      else el.setAttribute(key, props[key]);
    });
    (children || []).forEach(function (child) {
      el.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return el;
  }
  function mount(id, node) { document.getElementById(id).appendChild(node); }
  function injectStyles(css) {
    var style = document.createElement("style");
    style.setAttribute("data-component-styles", "orchard");
    style.textContent = css;
    document.head.appendChild(style);
  }
  // --- components ------------------------------------------------------------------------------------
  var Nav = function (links) {
    return h("div", { className: "nav-links" }, links.map(function (l) { return h("a", { href: "#" + l[0] }, [l[1]]); }));
  };
  var Card = function (item) {
    return h("article", { className: "card" }, [
      h("h3", {}, [item.name]), h("p", { className: "price" }, [item.price]), h("p", {}, [item.note])
    ]);
  };
  var Farm = function (farm) { return h("li", {}, [h("strong", {}, [farm[0]]), " \u2014 " + farm[1]]); };
  // --- data ------------------------------------------------------------------------------------------
  var produce = [
    { name: "Bramley apples", price: "\u00a32.40 / kg", note: "Sharp cooking apples from the Hollins orchard." },
    { name: "Conference pears", price: "\u00a32.90 / kg", note: "Firm and sweet, picked this week." },
    { name: "Victoria plums", price: "\u00a33.60 / kg", note: "The last of the season from Ashby Farm." }
  ];
  var boxes = [
    { name: "Small box", price: "\u00a312 / week", note: "About four kilograms of mixed fruit." },
    { name: "Family box", price: "\u00a320 / week", note: "Seven kilograms, with a jar of apple butter." },
    { name: "Baker's box", price: "\u00a316 / week", note: "Cooking apples, pears and quinces for the oven." }
  ];
  var farms = [["Hollins Orchard", "apples and cider"], ["Ashby Farm", "plums and damsons"],
               ["Greyfield", "pears and quinces"], ["Weir Cottage", "cherries and honey"]];
  // --- render ----------------------------------------------------------------------------------------
  injectStyles(
    ".cards{display:grid;grid-template-columns:repeat(3,1fr);gap:18px}" +
    ".card{border:1px solid #d9d2ba;border-radius:6px;padding:14px 16px;background:#fdfcf7}" +
    ".card h3{margin:0 0 4px;font-size:19px}.price{color:#8a4b12;font-weight:700;margin:0 0 6px}" +
    ".nav-links{display:flex;gap:26px}.nav-links a{color:#3f6b3a;font-weight:700;text-decoration:none}" +
    ".farms{margin:0;padding-left:20px}.farms li{margin:6px 0}");
  mount("app-nav", Nav([["harvest", "In season"], ["farms", "Farms"], ["boxes", "Fruit boxes"], ["pickup", "Pick-up"], ["join", "Join"]]));
  produce.forEach(function (p) { mount("app-produce", Card(p)); });
  boxes.forEach(function (b) { mount("app-boxes", Card(b)); });
  farms.forEach(function (f) { mount("app-farms", Farm(f)); });
})();
