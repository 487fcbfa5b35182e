"""describe_change: what an actor step changed, read from real Chromium and on constructed states."""

from __future__ import annotations

import asyncio

import pytest

from runner.browser.launch import BrowserPool
from runner.browser.page_diff import PageState, describe_change, read_page_state

COUNTER = """<!doctype html><html><body><h1>Tally</h1><p id=out>Count: 0</p>
<input id=qty value="1"><button id=add onclick="
  document.getElementById('out').textContent = 'Count: ' + document.getElementById('qty').value;
  document.getElementById('qty').value = '5';
  const li = document.createElement('li'); li.textContent = 'added row'; document.body.appendChild(li);
">Add</button></body></html>"""


def test_constructed_states_name_what_changed() -> None:
    before = PageState(lines=["Tally", "Count: 0", "Save"], controls={'input[text] "#qty"': 'value="1"'}, elements=8)
    after = PageState(lines=["Tally", "Count: 1", "Save", "Saved"], controls={'input[text] "#qty"': 'value="2"'},
                      elements=9)
    assert describe_change(before, after) == (
        'text added: "Count: 1", "Saved"; text removed: "Count: 0"; '
        'controls: input[text] "#qty": value="1" -> value="2"; elements: 8 -> 9')
    assert describe_change(before, before).startswith("no visible change")
    assert describe_change(before, None).startswith("page state unknown")
    # A line shown once more than before is an addition even though the text existed already.
    assert describe_change(PageState(lines=["row"]), PageState(lines=["row", "row"])) == 'text added: "row"'


@pytest.mark.browser
def test_a_click_is_described_from_the_live_page(site, browser_settings) -> None:
    url = site.add("/", COUNTER)

    async def main() -> str:
        async with BrowserPool(browser_settings) as pool:
            async with pool.session(url) as session:
                await session.goto()
                before = await read_page_state(session)
                await session.page.click("#add")
                return describe_change(before, await read_page_state(session))

    change = asyncio.run(main())
    assert 'text added: "Count: 1", "added row"' in change
    assert 'text removed: "Count: 0"' in change
    assert 'input[text] "#qty": value="1" -> value="5"' in change
