// The annotation page: every text from the sample is untrusted and is only ever set as textContent.
"use strict";
let annotator = "";
let current = null;

function $(id) { return document.getElementById(id); }
function text(id, value) { $(id).textContent = value == null ? "" : String(value); }
function json(value) { return value == null ? "(none)" : JSON.stringify(value, null, 2); }

function fillChoices(state) {
  const dims = $("dimensions");
  if (!dims.dataset.filled) {
    for (const name of state.dimensions) {
      const label = document.createElement("label");
      label.textContent = name + " ";
      const select = document.createElement("select");
      select.id = "dim-" + name;
      select.dataset.dimension = name;
      const blank = document.createElement("option");
      blank.value = ""; blank.textContent = "-";
      select.appendChild(blank);
      for (let score = state.score_range[0]; score <= state.score_range[1]; score++) {
        const option = document.createElement("option");
        option.value = String(score); option.textContent = String(score);
        select.appendChild(option);
      }
      label.appendChild(select);
      dims.appendChild(label);
    }
    for (const name of state.mechanisms) {
      const option = document.createElement("option");
      option.value = name; option.textContent = name.replaceAll("_", " ");
      $("mechanism").appendChild(option);
    }
    // Audit mode (EvoGenUI-Bench App. C.2.1): one radio per attribution category.
    const titles = { prior_regression: "Prior-regression-containing (something the previous passing turn had was " +
                       "removed, contradicted, disconnected or made stale)",
                     new_requirement_only: "New-requirement-only (previous behaviour intact; the new request failed)",
                     insufficient_evidence: "Insufficient evidence to attribute" };
    for (const name of state.attributions) {
      const label = document.createElement("label");
      const radio = document.createElement("input");
      radio.type = "radio"; radio.name = "attribution"; radio.id = "attr-" + name; radio.value = name;
      label.appendChild(radio);
      label.appendChild(document.createTextNode(" " + (titles[name] || name)));
      $("attribution").appendChild(label);
      $("attribution").appendChild(document.createElement("br"));
    }
    dims.dataset.filled = "1";
  }
}

function fillList(id, criteria) {
  const list = $(id); list.replaceChildren();
  for (const c of criteria || []) {
    const li = document.createElement("li"); li.textContent = `${c.id}: ${c.description}`; list.appendChild(li);
  }
}

function fillShots(id, names) {
  const shots = $(id); shots.replaceChildren();
  for (const name of names || []) {
    const img = document.createElement("img");
    img.src = `/images/${encodeURIComponent(current.item)}/${encodeURIComponent(name)}`; img.alt = name; img.title = name;
    shots.appendChild(img);
  }
}

function fillTrace(id, trace) {
  const list = $(id); list.replaceChildren();
  for (const step of (trace ? trace.steps : [])) {
    const li = document.createElement("li");
    li.textContent = `${step.ok ? "ok" : "FAILED"} ${JSON.stringify(step.action)} -> ${step.observation} ${step.error}`;
    list.appendChild(li);
  }
}

function show(state) {
  fillChoices(state);
  text("progress", `${state.done} of ${state.total} labelled by ${annotator}`);
  current = state.item;
  $("slot").hidden = current == null;
  $("done").hidden = current != null;
  if (current == null) return;
  text("item-id", current.item); text("title", current.title); text("turn", current.turn);
  text("context", current.context); text("previous", current.previous_prompts.join("\n---\n") || "(first turn)");
  text("prompt", current.prompt); text("assistant", current.assistant_text);
  text("build", `${current.build.status}\n${current.build.log}`);
  text("tools", json(current.tool_log)); text("errors", current.page_errors.join("\n") || "(none)");
  text("request", json(current.request));
  fillList("criteria", current.criteria);
  fillShots("screenshots", current.screenshots);
  fillTrace("trace", current.trace);
  const audit = state.mode === "apr_audit";
  $("audit-intro").hidden = !audit; $("previous-turn").hidden = !audit;
  $("slot-form").hidden = audit; $("attribution").hidden = !audit;
  if (audit) {
    const prev = current.previous;
    text("prev-turn", prev.turn); text("prev-prompt", prev.prompt); text("prev-assistant", prev.assistant_text);
    text("prev-tools", json(prev.tool_log));
    fillList("prev-criteria", prev.criteria);
    fillShots("prev-screenshots", prev.screenshots);
    fillTrace("prev-trace", prev.trace);
  }
  for (const radio of document.getElementsByName("attribution")) radio.checked = false;
  for (const radio of document.getElementsByName("passed")) radio.checked = false;
  for (const select of $("dimensions").querySelectorAll("select")) select.value = "";
  $("mechanism").value = ""; $("note").value = "";
  window.scrollTo(0, 0);
}

async function call(response) {
  const body = await response.json();
  if (!response.ok) { text("message", body.error); return; }
  text("message", ""); show(body);
}

$("start").addEventListener("click", async () => {
  annotator = $("annotator").value.trim();
  if (!annotator) { text("message", "give your annotator id"); return; }
  await call(await fetch(`/api/next?annotator=${encodeURIComponent(annotator)}`));
});

$("save").addEventListener("click", async () => {
  if (!$("attribution").hidden) {
    const attribution = document.querySelector("input[name=attribution]:checked");
    if (!attribution) { text("message", "choose an attribution"); return; }
    const label = { item: current.item, annotator, attribution: attribution.value, note: $("note").value };
    await call(await fetch("/api/label", { method: "POST", headers: { "Content-Type": "application/json" },
                                            body: JSON.stringify(label) }));
    return;
  }
  const chosen = document.querySelector("input[name=passed]:checked");
  if (!chosen) { text("message", "choose pass or fail"); return; }
  const dimensions = {};
  for (const select of $("dimensions").querySelectorAll("select")) {
    if (select.value !== "") dimensions[select.dataset.dimension] = Number(select.value);
  }
  const label = { item: current.item, annotator, passed: chosen.value === "true", dimensions,
                  mechanism: $("mechanism").value || null, note: $("note").value };
  await call(await fetch("/api/label", { method: "POST", headers: { "Content-Type": "application/json" },
                                          body: JSON.stringify(label) }));
});
