// The annotation page (runner/view/annotate_mode.py). Every text from the sample is untrusted: it is only
// ever set as textContent, or as the src/alt of an element made here; nothing from it is parsed as HTML.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const root = $("annotate");
  const base = root.dataset.base;
  const audit = root.dataset.mode === "apr_audit";
  const dimensions = Array.from(document.querySelectorAll("[data-dimension]"), (row) => row.dataset.dimension);
  const firstRow = document.querySelector("[data-dimension]");
  const scores = firstRow ? Array.from(firstRow.querySelectorAll("input"), (input) => input.value) : [];
  const STORE = "genui.annotator";  // the annotator id, remembered by this browser
  let annotator = "";
  let state = null;  // the last answer of the API: {total, done, index, item, label}
  let activeDim = 0;
  let busy = false;
  const viewers = {
    current: { img: $("shot"), caption: $("shot-name"), strip: $("screenshots"), names: [], at: 0 },
    previous: { img: $("prev-shot"), caption: $("prev-shot-name"), strip: $("prev-screenshots"), names: [], at: 0 },
  };

  function text(id, value) { const el = $(id); if (el) el.textContent = value == null ? "" : String(value); }
  function json(value) { return value == null ? "(none)" : JSON.stringify(value, null, 2); }
  function message(value) { text("message", value); }
  function checked(name) { return document.querySelector(`input[name="${name}"]:checked`); }

  function imageUrl(name) {
    return `${base}/images/${encodeURIComponent(state.item.item)}/${encodeURIComponent(name)}`;
  }

  function fillList(id, criteria) {
    const list = $(id); if (!list) return;
    list.replaceChildren();
    for (const c of criteria || []) {
      const li = document.createElement("li");
      const key = document.createElement("code"); key.textContent = c.id;
      li.append(key, document.createTextNode(" " + c.description));
      list.appendChild(li);
    }
  }

  function fillTrace(id, trace) {
    const list = $(id); if (!list) return;
    list.replaceChildren();
    for (const step of (trace ? trace.steps : [])) {
      const li = document.createElement("li");
      li.className = step.ok ? "" : "fail";
      li.textContent = `${step.ok ? "ok" : "FAILED"} ${JSON.stringify(step.action)} -> ${step.observation || ""} ${step.error || ""}`;
      list.appendChild(li);
    }
    if (!list.children.length) { const li = document.createElement("li"); li.className = "muted"; li.textContent = "(no actor steps)"; list.appendChild(li); }
  }

  function showShot(viewer, at) {
    if (!viewer.img) return;
    if (!viewer.names.length) { viewer.img.removeAttribute("src"); viewer.caption.textContent = "(no screenshots)"; return; }
    viewer.at = (at + viewer.names.length) % viewer.names.length;
    const name = viewer.names[viewer.at];
    viewer.img.src = imageUrl(name);
    viewer.img.alt = name;
    viewer.caption.textContent = `${name} (${viewer.at + 1} of ${viewer.names.length})`;
    viewer.strip.querySelectorAll("button").forEach((b, i) => b.classList.toggle("on", i === viewer.at));
  }

  function fillShots(viewer, names) {
    if (!viewer.img) return;
    viewer.names = names || [];
    viewer.strip.replaceChildren();
    viewer.names.forEach((name, i) => {
      const button = document.createElement("button");
      button.type = "button"; button.title = name; button.tabIndex = -1;
      const img = document.createElement("img");
      img.src = imageUrl(name); img.alt = name;
      button.appendChild(img);
      button.addEventListener("click", () => showShot(viewer, i));
      viewer.strip.appendChild(button);
    });
    showShot(viewer, 0);
  }

  function markDimension() {
    document.querySelectorAll("[data-dimension]").forEach((row, i) => row.classList.toggle("active", i === activeDim));
  }

  function resetForm(label) {
    for (const input of root.querySelectorAll("#form input[type=radio]")) input.checked = false;
    if ($("mechanism")) $("mechanism").value = "";
    $("note").value = label ? label.note || "" : "";
    if (!label) return;
    if (audit) { const radio = $(`attr-${label.attribution}`); if (radio) radio.checked = true; return; }
    $(label.passed ? "pass" : "fail").checked = true;
    for (const [name, score] of Object.entries(label.dimensions || {})) {
      const radio = $(`dim-${name}-${Math.round(score)}`); if (radio) radio.checked = true;
    }
    if ($("mechanism")) $("mechanism").value = label.mechanism || "";
  }

  function show(payload) {
    state = payload;
    text("progress", `${payload.done} of ${payload.total} labelled by ${annotator}`);
    $("bar").max = Math.max(payload.total, 1); $("bar").value = payload.done;
    const item = payload.item;
    $("waiting").hidden = true;
    $("done").hidden = item != null;
    $("slot").hidden = item == null; $("evidence").hidden = item == null; $("form").hidden = item == null;
    if (item == null) return;
    text("item-id", item.item); text("title", item.title); text("turn", item.turn);
    text("position", `${payload.index + 1} of ${payload.total}`);
    $("labelled").hidden = payload.label == null;
    text("context", item.context || "(none)");
    text("previous", (item.previous_prompts || []).join("\n---\n") || "(first turn)");
    text("prompt", item.prompt); text("assistant", item.assistant_text);
    text("build", item.build ? `${item.build.status}\n${item.build.log}` : "(none)");
    text("tools", json(item.tool_log)); text("errors", (item.page_errors || []).join("\n") || "(none)");
    text("request", json(item.request));
    fillList("criteria", item.criteria);
    fillTrace("trace", item.trace);
    fillShots(viewers.current, item.screenshots);
    if (audit && item.previous) {
      const prev = item.previous;
      text("prev-turn", prev.turn); text("prev-prompt", prev.prompt); text("prev-assistant", prev.assistant_text);
      text("prev-tools", json(prev.tool_log));
      fillList("prev-criteria", prev.criteria); fillTrace("prev-trace", prev.trace);
      fillShots(viewers.previous, prev.screenshots);
    }
    resetForm(payload.label);
    activeDim = 0; markDimension();
    document.querySelectorAll(".col").forEach((col) => { col.scrollTop = 0; });
  }

  async function call(url, options) {
    if (busy) return false;
    busy = true;
    try {
      const response = await fetch(url, options);
      const body = await response.json();
      if (!response.ok) { message(body.error); return false; }
      message(""); show(body); return true;
    } catch (error) {
      message(`the viewer did not answer: ${error}`); return false;
    } finally { busy = false; }
  }

  function query(extra) { return new URLSearchParams({ annotator, ...extra }).toString(); }

  function start(name) {
    name = name.trim();
    if (!name) { message("give your annotator id"); $("annotator").focus(); return; }
    annotator = name;
    localStorage.setItem(STORE, name);
    text("who", name);
    $("login").hidden = true; $("who-row").hidden = false;
    $("annotator").blur();
    call(`${base}/api/next?${query({})}`);  // the first unlabelled item: where a restart resumes
  }

  function go(step) {
    if (!state || !state.total) return;
    const from = state.index == null ? (step > 0 ? -1 : 0) : state.index;
    const index = (from + step + state.total) % state.total;
    call(`${base}/api/item/${index}?${query({})}`);
  }

  async function save() {
    if (!state || !state.item) return;
    let label;
    const note = $("note").value;
    if (audit) {
      const chosen = checked("attribution");
      if (!chosen) { message("choose an attribution (1-3)"); return; }
      label = { item: state.item.item, annotator, attribution: chosen.value, note };
    } else {
      const chosen = checked("passed");
      if (!chosen) { message("choose pass (p) or fail (f)"); return; }
      const passed = chosen.value === "true";
      const scored = {};
      for (const name of dimensions) { const radio = checked(`dim-${name}`); if (radio) scored[name] = Number(radio.value); }
      // A mechanism explains a failure (EvoGenUI-Bench §6.1): a pass records none.
      label = { item: state.item.item, annotator, passed, dimensions: scored,
                mechanism: passed ? null : ($("mechanism").value || null), note };
    }
    if (document.activeElement && document.activeElement !== document.body) document.activeElement.blur();
    await call(`${base}/api/label`, { method: "POST", headers: { "Content-Type": "application/json" },
                                      body: JSON.stringify(label) });
  }

  function score(value) {
    if (!dimensions.length) return;
    const name = dimensions[activeDim];
    if (value === null) { const radio = checked(`dim-${name}`); if (radio) radio.checked = false; return; }
    const radio = $(`dim-${name}-${value}`);
    if (!radio) return;
    radio.checked = true;
    activeDim = (activeDim + 1) % dimensions.length; markDimension();
  }

  function toggleHelp(show) { $("help").hidden = show === undefined ? !$("help").hidden : !show; }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    const typing = target instanceof HTMLElement && (target.matches("select, textarea") ||
      (target.matches("input") && !target.matches("[type=radio], [type=checkbox]")));
    if (typing) {
      if (event.key === "Escape") { event.preventDefault(); target.blur(); }
      else if (event.key === "Enter") { event.preventDefault(); if (target.id === "annotator") start(target.value); else save(); }
      return;
    }
    if (event.key === "?") { event.preventDefault(); toggleHelp(); return; }
    if (event.key === "Escape") { toggleHelp(false); return; }
    if (!annotator) return;
    if (target instanceof HTMLButtonElement && event.key === "Enter") return;  // the button's own click
    const key = event.key;
    let handled = true;
    if (key === "Enter") save();
    else if (key === "j" || key === "ArrowRight") go(1);
    else if (key === "k" || key === "ArrowLeft") go(-1);
    else if (key === "]") showShot(viewers.current, viewers.current.at + 1);
    else if (key === "[") showShot(viewers.current, viewers.current.at - 1);
    else if (key === "n") $("note").focus();
    else if (audit && /^[1-9]$/.test(key)) {
      const radios = document.getElementsByName("attribution");
      const radio = radios[Number(key) - 1]; if (radio) radio.checked = true; else handled = false;
    } else if (!audit && key === "p") $("pass").checked = true;
    else if (!audit && key === "f") $("fail").checked = true;
    else if (!audit && key === "m") $("mechanism").focus();
    else if (!audit && key === "d") { activeDim = (activeDim + 1) % Math.max(dimensions.length, 1); markDimension(); }
    else if (!audit && key === "0") score(null);
    else if (!audit && scores.includes(key)) score(key);
    else handled = false;
    if (handled) event.preventDefault();  // "m" and "n" must not type into the field they focus
  }

  document.addEventListener("keydown", onKey);
  $("start").addEventListener("click", () => start($("annotator").value));
  $("change").addEventListener("click", () => {
    annotator = ""; state = null;
    $("login").hidden = false; $("who-row").hidden = true; $("form").hidden = true;
    $("annotator").value = ""; $("annotator").focus();
  });
  $("save").addEventListener("click", save);
  $("next-item").addEventListener("click", () => go(1));
  $("prev-item").addEventListener("click", () => go(-1));
  $("help").addEventListener("click", () => toggleHelp(false));
  document.querySelectorAll("[data-dimension]").forEach((row, i) => row.addEventListener("click", () => { activeDim = i; markDimension(); }));

  const remembered = localStorage.getItem(STORE);
  if (remembered) { $("annotator").value = remembered; start(remembered); }
  else $("annotator").focus();
})();
