// The arena page (runner/suites/floweval/arena/view_mode.py): keyboard shortcuts for the vote form and the
// expand buttons. The sites run in cross-origin frames; nothing here reads them.
"use strict";
(() => {
  const form = document.getElementById("vote");
  const help = document.getElementById("help");
  let sent = false;  // one vote per page: a second key press must not vote on the next pair

  function toggle(button) {
    const pane = document.getElementById(button.dataset.expand);
    pane.classList.toggle("expanded");
    button.lastChild.textContent = pane.classList.contains("expanded") ? " Shrink" : " Expand";
  }
  document.querySelectorAll("[data-expand]").forEach((button) => button.addEventListener("click", () => toggle(button)));
  if (form) form.addEventListener("submit", () => { sent = true; });
  help.addEventListener("click", () => { help.hidden = true; });

  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "?") { help.hidden = !help.hidden; event.preventDefault(); return; }
    if (event.key === "Escape") { help.hidden = true; return; }
    if (event.key === "1" || event.key === "2") {
      const button = document.querySelectorAll("[data-expand]")[Number(event.key) - 1];
      if (button) { toggle(button); event.preventDefault(); }
      return;
    }
    if (!form || sent) return;
    const button = form.querySelector(`button[data-key="${CSS.escape(event.key)}"]`);
    if (!button) return;
    event.preventDefault();
    sent = true;
    form.requestSubmit(button);
  });
})();
