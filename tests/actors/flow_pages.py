"""A page that needs every step a flow may take (double-click to edit, hover to reveal, keys, select, check,
drag, scroll, an answer that arrives late, a control enabled late), shared by the scripted actor's tests."""

from __future__ import annotations

# `busy_ms`: each action's handler also burns this much CPU synchronously (a slow page); the late answers and the
# late-enabled button come by timers, so only waiting on conditions gives the same trace at any speed. (Each timer
# ends in a state a step waits for: a state that a later timer of the page would change while nothing waits is
# a race no actor can win, and the page has none.)
FLOW_PAGE = """<!doctype html><html><head><style>
  body { font: 16px sans-serif; margin: 0; }
  .item .remove { display: none; } .item:hover .remove { display: inline; }
  .editing label { display: none; } .edit { display: none; } .editing .edit { display: inline; }
  #bin { width: 200px; height: 60px; border: 2px dashed #888; }
  #card { width: 120px; height: 30px; background: #cde; }
  #tall { height: 3000px; } #scrolled { position: fixed; top: 0; right: 0; }
</style></head><body>
<h1>Flows</h1>
<ul><li class="item" id="item"><label id="title">Buy milk</label><input class="edit" aria-label="Edit title">
  <button class="remove">Remove</button></li></ul>
<label>Size <select aria-label="Size"><option value="s">Small</option><option value="l">Large</option></select></label>
<label><input type="checkbox" aria-label="Gift wrap"> Gift wrap</label>
<button id="late" disabled>Confirm</button>
<div id="card" draggable="true">Card</div><div id="bin">Bin</div>
<p id="status">ready</p><p id="scrolled">top</p>
<div id="tall"></div>
<script>
  const busy = %(busy_ms)d;
  const burn = () => { const end = performance.now() + busy; while (performance.now() < end) {} };
  const status = (text) => { burn(); document.getElementById('status').textContent = text; };
  const item = document.getElementById('item'), edit = item.querySelector('.edit');
  document.getElementById('title').addEventListener('dblclick', () => {
    item.classList.add('editing'); edit.value = document.getElementById('title').textContent; edit.focus();
    status('editing');
  });
  edit.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') { document.getElementById('title').textContent = edit.value;
      item.classList.remove('editing'); status('saved ' + edit.value); }
    if (event.key === 'Escape') { item.classList.remove('editing'); status('cancelled'); }
  });
  item.querySelector('.remove').addEventListener('click', () => status('removed'));
  document.querySelector('select').addEventListener('change', (e) => status('size ' + e.target.value));
  document.querySelector('input[type=checkbox]').addEventListener('change', (e) => status('gift ' + e.target.checked));
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey && event.key === 'k') status('shortcut');
    if (event.key === 'Tab') setTimeout(() => status('tabbed'), 0);
  });
  // A lookup whose answer arrives late and makes a control usable; that control's answer arrives late too.
  document.getElementById('status').addEventListener('click', () => {
    status('looking up');
    setTimeout(() => { status('found 3 results'); document.getElementById('late').disabled = false; }, %(late_ms)d);
  });
  document.getElementById('late').addEventListener('click', () => {
    status('confirming');
    setTimeout(() => status('confirmed'), 300);
  });
  const card = document.getElementById('card'), bin = document.getElementById('bin');
  card.addEventListener('dragstart', (e) => e.dataTransfer.setData('text/plain', 'card'));
  bin.addEventListener('dragover', (e) => e.preventDefault());
  bin.addEventListener('drop', (e) => { e.preventDefault(); status('dropped ' + e.dataTransfer.getData('text/plain')); });
  window.addEventListener('scroll', () => {
    document.getElementById('scrolled').textContent = window.scrollY > 1000 ? 'far down' : 'top'; });
</script>
</body></html>"""

FLOW_STEPS = [
    {"action": "dblclick", "target": {"text": "Buy milk"}},
    {"action": "fill", "target": {"label": "Edit title"}, "value": "Buy oat milk"},
    {"action": "press", "target": {"label": "Edit title"}, "key": "Enter"},
    {"action": "dblclick", "target": {"text": "Buy oat milk"}},
    {"action": "press", "key": "Escape"},
    {"action": "hover", "target": {"css": "#item"}},
    {"action": "click", "target": {"role": "button", "name": "Remove"}},
    {"action": "select", "target": {"label": "Size"}, "value": "Large"},
    {"action": "check", "target": {"label": "Gift wrap"}},
    {"action": "press", "key": "Control+k"},
    {"action": "press", "key": "Tab"},
    {"action": "drag", "target": {"css": "#card"}, "to": {"css": "#bin"}},
    {"action": "click", "target": {"css": "#status"}},
    {"action": "click", "target": {"role": "button", "name": "Confirm"}},  # waits until the lookup enables it
    {"action": "wait_for_text", "text": "confirmed"},
    {"action": "scroll", "dy": 2000},
    {"action": "scroll", "target": {"css": "#bin"}},
]

# The status line each step's observation shows (the state before an action, the state once a wait is over),
# then the final page's.
EXPECTED_STATUS = ["ready", "editing", "editing", "saved Buy oat milk", "editing", "cancelled", "cancelled",
                   "removed", "size l", "gift true", "shortcut", "tabbed", "dropped card", "found 3 results",
                   "confirmed", "confirmed", "confirmed", "confirmed"]


def flow_page(busy_ms: int = 0, late_ms: int = 600) -> str:
    """`late_ms`: how long after the lookup the Confirm button is enabled."""
    return FLOW_PAGE % {"busy_ms": busy_ms, "late_ms": late_ms}
