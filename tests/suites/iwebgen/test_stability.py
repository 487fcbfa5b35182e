"""Rule & Stability (I-WebGenBench B.1): start at 5, the penalties, the floor, the build-failure zero."""

from __future__ import annotations

from runner.turns.evidence import Evidence, Trace
from runner.suites.iwebgen.stability import StabilityPenalties, stability


def _evidence(**fields) -> Evidence:
    return Evidence(url="http://x/", **fields)


def test_a_clean_app_keeps_all_five_points() -> None:
    result = stability(built=True, evidence=_evidence(), trace=Trace(actor="probe"), page_errors=[])
    assert (result.points, result.penalties) == (5.0, [])


def test_penalties_add_up_and_stop_at_zero() -> None:
    assert stability(built=True, evidence=_evidence(blank=True), trace=None, page_errors=[]).points == 0.0
    assert stability(built=True, evidence=_evidence(load_error="net::ERR"), trace=None, page_errors=[]).points == 2.0
    aborted = Trace(actor="probe", summary={"aborted": "page unusable after step 3"})
    assert stability(built=True, evidence=_evidence(), trace=aborted, page_errors=[]).points == 2.0
    # Distinct uncaught exceptions, from load and from probing, 1 each, 2 at most.
    one = stability(built=True, evidence=_evidence(page_errors=["TypeError: a"]), trace=None, page_errors=["TypeError: a"])
    assert one.points == 4.0
    many = stability(built=True, evidence=_evidence(page_errors=["E1"]), trace=None, page_errors=["E2", "E3"])
    assert many.points == 3.0 and "3 uncaught" in many.penalties[0]
    both = stability(built=True, evidence=_evidence(blank=True, page_errors=["E1"]), trace=None, page_errors=[])
    assert both.points == 0.0 and len(both.penalties) == 2


def test_penalty_sizes_are_options_and_a_failed_build_is_zero() -> None:
    gentle = StabilityPenalties(blank_screen=2.0)
    assert stability(built=True, evidence=_evidence(blank=True), trace=None, page_errors=[], penalties=gentle).points == 3.0
    assert stability(built=False, evidence=None, trace=None, page_errors=[]).points == 0.0
