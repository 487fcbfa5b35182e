// The runs list's Compare button and the turn lists' filters, pages and URL-hash state.
// Rows come from a rows script (window.GENUI_ROWS); everything from a run is inserted as text, never as HTML.
(function () {
  "use strict";
  var PAGE_SIZE = 100;

  // --- runs list: tick runs, Compare goes to /compare/<a>+<b>[+...]
  function setUpCompare() {
    var button = document.getElementById("compare");
    if (!button) return;
    if (window.GENUI_STATIC) {  // an exported site holds no comparison pages: only the served viewer makes them
      button.disabled = true;
      button.title = "comparing runs needs the served viewer (python -m runner.view)";
      Array.prototype.forEach.call(document.querySelectorAll("input.pick"), function (box) { box.disabled = true; });
      return;
    }
    var picks = Array.prototype.slice.call(document.querySelectorAll("input.pick"));
    function chosen() { return picks.filter(function (box) { return box.checked; }).map(function (box) { return box.value; }); }
    function update() { button.disabled = chosen().length < 2; }
    picks.forEach(function (box) { box.addEventListener("change", update); });
    button.addEventListener("click", function () {
      var ids = chosen();
      if (ids.length >= 2) window.location.href = "/compare/" + ids.map(encodeURIComponent).join("+");
    });
    update();
  }

  // --- turn lists
  var FILTERS = ["run", "model", "suite", "sub_suite", "task", "turn", "bucket", "outcome", "mechanism", "disagree"];

  function matches(row, state) {
    for (var i = 0; i < FILTERS.length; i++) {
      var key = FILTERS[i], wanted = state[key];
      if (!wanted) continue;
      if (key === "disagree") {
        if (wanted === "yes" && !row.disagree) return false;
        if (wanted === "labelled" && !row.human) return false;
      } else if (String(row[key] === null || row[key] === undefined ? "" : row[key]) !== wanted) {
        return false;
      }
    }
    return true;
  }

  function readHash() {
    var params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
    var state = {};
    FILTERS.forEach(function (key) { state[key] = params.get(key) || ""; });
    state.page = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
    return state;
  }

  function writeHash(state) {
    var params = new URLSearchParams();
    FILTERS.forEach(function (key) { if (state[key]) params.set(key, state[key]); });
    if (state.page > 1) params.set("page", String(state.page));
    var text = params.toString();
    if (window.location.hash.replace(/^#/, "") !== text) window.location.hash = text;
  }

  function cell(tr, text, className) {
    var td = document.createElement("td");
    td.textContent = text === null || text === undefined ? "" : String(text);
    if (className) td.className = className;
    tr.appendChild(td);
    return td;
  }

  function link(td, href, text) {
    td.textContent = "";
    var a = document.createElement("a");
    a.href = window.GENUI_LINK(href);
    a.textContent = text;
    td.appendChild(a);
  }

  function episodeHref(row) {
    return "/runs/" + encodeURIComponent(row.run) + "/tasks/" + encodeURIComponent(row.task);
  }

  function setUpTurns() {
    var table = document.getElementById("turns");
    var form = document.getElementById("filters");
    if (!table || !form) return;
    var rows = window.GENUI_ROWS || [];
    var singleRun = form.getAttribute("data-single-run");
    var selects = {};
    Array.prototype.forEach.call(form.querySelectorAll("select[data-filter]"), function (select) {
      selects[select.getAttribute("data-filter")] = select;
    });

    // Options: the values the rows hold (turns in numeric order).
    Object.keys(selects).forEach(function (key) {
      if (key === "disagree") return;
      var seen = {};
      rows.forEach(function (row) { var v = row[key]; if (v !== null && v !== undefined && v !== "") seen[String(v)] = true; });
      var values = Object.keys(seen);
      values.sort(key === "turn" ? function (a, b) { return a - b; } : undefined);
      values.forEach(function (value) {
        var option = document.createElement("option");
        option.value = value;
        option.textContent = value;
        selects[key].appendChild(option);
      });
    });

    var tbody = table.querySelector("tbody");
    var count = document.getElementById("count");
    var pager = document.getElementById("pager");

    function pageButton(label, page, current, state) {
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = label;
      button.setAttribute("data-page", String(page));
      if (current) { button.disabled = true; button.className = "current"; button.setAttribute("aria-current", "page"); }
      button.addEventListener("click", function () { state.page = page; writeHash(state); });
      pager.appendChild(button);
    }

    function render() {
      var state = readHash();
      Object.keys(selects).forEach(function (key) {
        var select = selects[key], value = state[key];
        if (value && !Array.prototype.some.call(select.options, function (o) { return o.value === value; })) {
          var option = document.createElement("option");  // a linked value no row holds: keep it, it matches none
          option.value = value;
          option.textContent = value;
          select.appendChild(option);
        }
        select.value = value;
      });
      var shown = rows.filter(function (row) { return matches(row, state); });
      var pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
      var page = Math.min(state.page, pages);
      count.textContent = shown.length + " of " + rows.length + " turns" + (pages > 1 ? " · page " + page + " of " + pages : "");
      var fragment = document.createDocumentFragment();
      shown.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).forEach(function (row) {
        var tr = document.createElement("tr");
        tr.className = "turn-row outcome-" + row.outcome;  // not .pass/.fail: those colour a whole row
        tr.setAttribute("data-run", row.run);
        tr.setAttribute("data-task", row.task);
        tr.setAttribute("data-turn", String(row.turn));
        if (!singleRun) {
          link(cell(tr, ""), "/runs/" + encodeURIComponent(row.run), row.run);
          cell(tr, row.model);
        }
        cell(tr, row.sub_suite ? row.suite + " / " + row.sub_suite : row.suite);
        link(cell(tr, ""), episodeHref(row), row.task);
        link(cell(tr, "", "num"), episodeHref(row) + "/turns/" + encodeURIComponent(row.turn), "turn " + row.turn);
        cell(tr, row.bucket, "bucket");
        cell(tr, row.outcome, "outcome " + row.outcome);
        cell(tr, row.mechanism);
        cell(tr, row.human ? row.human + (row.disagree ? " (disagrees)" : "") : "", row.disagree ? "fail" : "");
        cell(tr, typeof row.score === "number" ? row.score.toFixed(2) : "", "num");
        link(cell(tr, ""), episodeHref(row), "filmstrip");
        fragment.appendChild(tr);
      });
      tbody.textContent = "";
      tbody.appendChild(fragment);
      pager.textContent = "";
      if (pages > 1) {
        state.page = page;  // a linked page past the end shows the last one
        if (page > 1) pageButton("‹ prev", page - 1, false, state);
        for (var p = 1; p <= pages; p++) {
          if (p === 1 || p === pages || Math.abs(p - page) <= 2) pageButton(String(p), p, p === page, state);
          else if (Math.abs(p - page) === 3) { var gap = document.createElement("span"); gap.textContent = "…"; pager.appendChild(gap); }
        }
        if (page < pages) pageButton("next ›", page + 1, false, state);
      }
      document.body.setAttribute("data-rendered", String(shown.length));
    }

    Object.keys(selects).forEach(function (key) {
      selects[key].addEventListener("change", function () {
        var state = readHash();
        state[key] = selects[key].value;
        state.page = 1;  // a new filter starts at its first page
        writeHash(state);
      });
    });
    document.getElementById("reset").addEventListener("click", function () { writeHash({ page: 1 }); });
    window.addEventListener("hashchange", render);
    render();
  }

  function start() { setUpCompare(); setUpTurns(); }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
