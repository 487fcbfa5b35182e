"""UI-TARS answers: the ui-tars package's parsing and coordinate mapping against hand-computed cases."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.actors.registry import build_actor
from runner.actors.uitars import UITarsActor, build_messages, computer_use_prompt
from runner.actors.uitars_actions import Screen, UITarsParseError, parse_answer, playwright_keys
from runner.config import ActorConfig
from runner.errors import ConfigError

# smart_resize by hand: each side rounded to the nearest multiple of 28 (the pixel count stays within the
# package's [100*28*28, 16384*28*28] here), and the model's coordinates divided by the RESIZED side, times
# the viewport's side.
#   1920x1080: 1920/28 = 68.57 -> 69*28 = 1932;  1080/28 = 38.57 -> 39*28 = 1092
#   1280x720:  1280/28 = 45.71 -> 46*28 = 1288;   720/28 = 25.71 -> 26*28 = 728
#   1366x768:  1366/28 = 48.79 -> 49*28 = 1372;   768/28 = 27.43 -> 27*28 = 756
#   3840x2160 (a 1920x1080 viewport at device scale 2): 3840/28 = 137.14 -> 3836;  2160/28 = 77.14 -> 2156
CASES = [
    # (screenshot w, h, viewport w, h, resized w, h, model point, page point)
    (1920, 1080, 1920, 1080, 1932, 1092, (966, 546), (960.0, 540.0)),
    (1920, 1080, 1920, 1080, 1932, 1092, (200, 300), (200 * 1920 / 1932, 300 * 1080 / 1092)),
    (1280, 720, 1280, 720, 1288, 728, (1288, 728), (1280.0, 720.0)),
    (1280, 720, 1280, 720, 1288, 728, (100, 50), (100 * 1280 / 1288, 50 * 720 / 728)),
    (1366, 768, 1366, 768, 1372, 756, (100, 200), (100 * 1366 / 1372, 200 * 768 / 756)),
    (3840, 2160, 1920, 1080, 3836, 2156, (1918, 1078), (960.0, 540.0)),
]


@pytest.mark.parametrize("shot_w,shot_h,view_w,view_h,resized_w,resized_h,model,page", CASES)
def test_coordinates_map_back_to_page_pixels(shot_w: int, shot_h: int, view_w: int, view_h: int, resized_w: int,
                                             resized_h: int, model: tuple[int, int],
                                             page: tuple[float, float]) -> None:
    screen = Screen(shot_w, shot_h, view_w, view_h)
    assert screen.resized() == (resized_h, resized_w)
    _, (action,) = parse_answer(f"Thought: go\nAction: click(start_box='({model[0]},{model[1]})')", screen)
    assert action.point == pytest.approx(page, abs=1e-3)


def test_large_screenshots_are_scaled_down_to_max_pixels() -> None:
    # max_pixels = 1280*28*28 = 1,003,520 < 1932*1092: beta = sqrt(1920*1080 / 1003520) = 1.43747;
    # 1080/beta = 751.3 -> floor to 26*28 = 728; 1920/beta = 1335.7 -> floor to 47*28 = 1316.
    screen = Screen(1920, 1080, 1920, 1080, max_pixels=1280 * 28 * 28)
    assert screen.resized() == (728, 1316)
    _, (action,) = parse_answer("Thought: t\nAction: click(start_box='(658,364)')", screen)
    assert action.point == pytest.approx((658 * 1920 / 1316, 364 * 1080 / 728), abs=1e-3)


FULL_HD = Screen(1920, 1080, 1920, 1080)


def parse(action: str) -> dict:
    thought, actions = parse_answer(f"Thought: the plan\nAction: {action}", FULL_HD)
    assert thought == "the plan" and len(actions) == 1
    return actions[0].record()


def test_each_action_kind_parses() -> None:
    px = lambda x, y: [round(x * 1920 / 1932, 3), round(y * 1080 / 1092, 3)]  # noqa: E731
    assert parse("click(start_box='(966,546)')") == {"kind": "click", "point": [960.0, 540.0]}
    assert parse("left_double(start_box='(10,20)')") == {"kind": "left_double", "point": px(10, 20)}
    assert parse("right_single(start_box='(10,20)')") == {"kind": "right_single", "point": px(10, 20)}
    assert parse("drag(start_box='(10,20)', end_box='(300,400)')") == {
        "kind": "drag", "point": px(10, 20), "end_point": px(300, 400)}
    assert parse("hotkey(key='ctrl a')") == {"kind": "hotkey", "key": "ctrl a"}
    assert parse("type(content='it\\'s done\\n')") == {"kind": "type", "content": "it's done\n"}
    assert parse("type(content='')") == {"kind": "type", "content": ""}
    assert parse("scroll(start_box='(966,546)', direction='down')") == {
        "kind": "scroll", "point": [960.0, 540.0], "direction": "down"}
    assert parse("scroll(direction='UP')") == {"kind": "scroll", "direction": "up"}
    assert parse("wait()") == {"kind": "wait"}
    assert parse("finished(content='ordered the CD')") == {"kind": "finished", "content": "ordered the CD"}


def test_coordinate_spellings_the_model_uses() -> None:
    # box tokens left in by a server that keeps special tokens; UI-TARS's <point>x y</point> form
    assert parse("click(start_box='<|box_start|>(966,546)<|box_end|>')")["point"] == [960.0, 540.0]
    assert parse("click(point='<point>966 546</point>')")["point"] == [960.0, 540.0]
    _, (action,) = parse_answer("Action: click(start_box='(966,546)')", FULL_HD)  # no thought
    assert action.point == (960.0, 540.0)


@pytest.mark.parametrize("answer,message", [
    ("I would click the button.", "no 'Action:'"),
    ("Thought: t\nAction: frobnicate(x='1')", "not in the action space"),
    ("Thought: t\nAction: click(start_box='(abc)')", "does not parse"),
    ("Thought: t\nAction: click()", "needs start_box"),
    ("Thought: t\nAction: drag(start_box='(1,2)')", "needs end_box"),
    ("Thought: t\nAction: scroll(direction='sideways')", "direction"),
    ("Thought: t\nAction: hotkey(key='hyper q')", "unknown key"),
    ("Thought: t\nAction: click(start_box='(2500,300)')", "outside the 1932x1092 screenshot"),
])
def test_malformed_answers_raise_a_parse_error(answer: str, message: str) -> None:
    with pytest.raises(UITarsParseError, match=message):
        parse_answer(answer, FULL_HD)


def test_hotkeys_become_playwright_chords() -> None:
    assert playwright_keys("ctrl c") == "Control+c"
    assert playwright_keys("ctrl shift T") == "Control+Shift+t"
    assert playwright_keys("enter") == "Enter"
    assert playwright_keys("arrowdown") == "ArrowDown"
    assert playwright_keys("alt f4") == "Alt+F4"
    assert playwright_keys("ctrl+a") == "Control+a"


def test_history_keeps_the_latest_screenshots_and_every_answer() -> None:
    shots = [f"data:image/png;base64,{i}" for i in range(5)]
    answers = [f"Action: wait() #{i}" for i in range(4)]
    messages = build_messages("PROMPT", answers, shots[2:], max_history_answers=50)  # history_images=3
    layout = [(m["role"], m["content"] if isinstance(m["content"], str) else m["content"][0]["image_url"]["url"])
              for m in messages]
    assert layout == [
        ("system", "You are a helpful assistant."), ("user", "PROMPT"),
        ("assistant", answers[0]), ("assistant", answers[1]),  # older steps: their answers only
        ("user", shots[2]), ("assistant", answers[2]), ("user", shots[3]), ("assistant", answers[3]),
        ("user", shots[4]),  # the current screenshot
    ]
    first = build_messages("PROMPT", [], shots[:1], max_history_answers=50)
    assert [m["role"] for m in first] == ["system", "user", "user"]
    bounded = build_messages("PROMPT", answers, shots[3:], max_history_answers=2)
    assert [m["content"] for m in bounded if m["role"] == "assistant"] == answers[2:]


def test_prompt_states_the_native_action_space_and_the_instruction() -> None:
    prompt = computer_use_prompt("Add milk to the cart.")
    assert "Thought: ...\nAction: ..." in prompt
    assert "click(start_box='<|box_start|>(x1,y1)<|box_end|>')" in prompt
    assert "finished(content='xxx')" in prompt and "wait()" in prompt
    assert prompt.rstrip().endswith("## User Instruction\nAdd milk to the cart.")


def test_named_config_builds_for_floweval() -> None:
    import yaml

    raw = yaml.safe_load((Path(__file__).resolve().parents[2] / "conf" / "actor" / "ui-tars.yaml").read_text())
    actor = build_actor(ActorConfig.model_validate(raw))
    assert isinstance(actor, UITarsActor) and actor.name == "ui-tars"
    s = actor.settings
    assert (s.max_steps, s.viewport_width, s.viewport_height) == (50, 1920, 1080)  # FlowEval §3.2
    assert s.model["temperature"] == 0.7 and s.model["vision"] is True
    assert raw["options"]["model"]["server"]["limit_mm_per_prompt"]["image"] >= s.history_images
    asyncio.run(actor.aclose())


def test_bad_options_name_the_key() -> None:
    model = {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "vision": True}
    with pytest.raises(ConfigError, match=r"actor\.options\.max_steps"):
        build_actor(ActorConfig(name="ui-tars", kind="uitars", options={"model": model, "max_steps": 0}))
    with pytest.raises(ConfigError, match=r"actor\.options\.model\.vision"):
        build_actor(ActorConfig(name="ui-tars", kind="uitars", options={"model": {**model, "vision": False}}))
    with pytest.raises(ConfigError, match=r"viewport_width and viewport_height"):
        build_actor(ActorConfig(name="ui-tars", kind="uitars", options={"model": model, "viewport_width": None}))


def test_the_instruction_is_the_flow_goal_as_stated_else_the_turn_to_check() -> None:
    from runner.actors.base import ActorContext
    from runner.actors.uitars import instruction_for
    from runner.turns.evidence import Evidence
    from runner.turns.tasks import Requirement, Task, TurnSpec

    turn = TurnSpec(index=1, prompt="Build a shop.", requirements=[Requirement(id="r1", description="A cart exists.")])
    task = Task(id="t", suite="floweval", title="Shop", context="", turns=[turn])
    context = ActorContext(task=task, turn=turn, evidence=Evidence(url="http://x/"), out_dir=Path("."))
    assert instruction_for(context) == ("Use this web app to check that it does what was asked: Build a shop.\n"
                                        "Check in particular:\n- A cart exists.")
    context.goal = "Buy one mug and check out as Ada Lovelace."  # FlowEval §3.2: the flow's task, verbatim
    assert instruction_for(context) == "Buy one mug and check out as Ada Lovelace."
