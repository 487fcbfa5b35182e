"""The typed suite seam: every suite subclasses SuiteBase, the shared settings are validated, and the
engine's browser set hands each pool to one holder at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.browser.launch import BrowserPool, BrowserPools
from runner.errors import ConfigError
from runner.turns.records import Verdict
from runner.suites.base import SuiteBase, SuiteContext
from runner.suites.registry import SUITES, build_suite
from tests.conftest import REPO_ROOT


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_suite_subclasses_the_base_and_declares_its_prompt_version(name: str) -> None:
    suite = build_suite({"name": name}, project_root=REPO_ROOT)
    assert isinstance(suite, SuiteBase)
    assert suite.prompt_version and suite.artifact_kind in ("vite", "static")
    assert suite.settings.generation == "single_pass"


def test_web_templates_come_from_the_suite_config() -> None:
    assert build_suite({"name": "smoke", "web_template": "default"}, project_root=REPO_ROOT).web_template == "default"
    assert build_suite({"name": "smoke"}, project_root=REPO_ROOT).web_template is None
    with pytest.raises(ConfigError, match=r"suite.web_template = 'nope'.*unknown web template 'nope'; choose from"):
        build_suite({"name": "smoke", "web_template": "nope"}, project_root=REPO_ROOT)


def test_an_unknown_generation_strategy_names_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"suite.generation = 'nope'.*choose from \['self_repair', 'single_pass'\]"):
        build_suite({"name": "micro", "generation": "nope"}, project_root=REPO_ROOT)


def test_defaults_of_the_base() -> None:
    class Minimal(SuiteBase):
        name = "minimal"
        prompt_version = "v1"

    suite = Minimal()
    with pytest.raises(RuntimeError, match="bind"):
        suite.context
    pools = BrowserPools([])
    suite.bind(SuiteContext(browsers=pools, sandbox=object()))  # type: ignore[arg-type]
    assert suite.context.browsers is pools and dict(suite.context.roles) == {}
    assert suite.artifact_assets(None, None) is None  # type: ignore[arg-type]
    assert asyncio.run(suite.prepare_judging(None, None, {}, Path("."))) == {}  # type: ignore[arg-type]

    class Judge:
        async def score(self, judge_input: object) -> Verdict:
            return Verdict(judge="j", passed=True)

    assert asyncio.run(suite.judge_turn(Judge(), None)).passed is True  # type: ignore[arg-type]


class _Unlaunched(BrowserPool):
    """A pool whose start launches nothing (a checkout starts a pool that never launched)."""

    async def start(self) -> None:
        return None


def test_a_checkout_is_a_visit_and_visits_beyond_the_limit_wait() -> None:
    """One visit at a time (the default for one browser): the second caller waits for the first to return its
    visit; two at a time: both visit the one browser at once."""

    async def scenario(visits: int | None) -> list[str]:
        pools = BrowserPools([_Unlaunched()], visits=visits)
        events: list[str] = []

        async def hold(label: str) -> None:
            async with pools.checkout() as pool:
                events.append(f"{label} got {id(pool) == id(next(iter(pools)))}")
                await asyncio.sleep(0.05)
                events.append(f"{label} done")

        await asyncio.gather(hold("a"), hold("b"))
        assert pools.launches == 0
        return events

    assert asyncio.run(scenario(None)) == ["a got True", "a done", "b got True", "b done"]
    assert asyncio.run(scenario(2)) == ["a got True", "b got True", "a done", "b done"]


def test_only_a_suite_that_drives_its_actor_itself_keeps_it_off_the_slot_page() -> None:
    # FlowEval runs every flow on both sites with the run's actor (SuiteContext.actor); the others let the
    # engine run it once on each slot's page.
    suites = {name: build_suite({"name": name}, project_root=REPO_ROOT) for name in SUITES}
    assert {name for name, suite in suites.items() if not suite.actor_on_slot_page} == {"floweval"}
