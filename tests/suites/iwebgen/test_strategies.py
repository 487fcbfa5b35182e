"""I-WebGenBench generation strategies: self-repair (C.3) and the block pipeline (C.4), driven by scripted
answers. The tools' build fails for chosen answers (the injected fault); the real build is in
test_self_repair_run.py."""

from __future__ import annotations

import asyncio
import json

import pytest

from runner.turns.generation import BuildCheck, Messages
from runner.models.base import GenerationRequest, ModelBase, ModelResponse, ProviderError
from runner.models.parse import parse_model_output, render_json_output
from runner.sandbox.base import BuildResult
from runner.suites.iwebgen.blocks import BlockPipeline
from runner.suites.iwebgen.repair import LOG_CHARS, REPAIR_ROUNDS, SOURCE_CHARS, SelfRepair
from runner.suites.iwebgen.strategy import iwebgen_strategy, pipeline_roles

PAYLOAD: Messages = [{"role": "system", "content": "You write React apps."},
                     {"role": "user", "content": "Specification: a predator-prey simulator."}]
BROKEN = render_json_output("first", {"src/App.jsx": "export default function App( {"})
FIXED = render_json_output("fixed", {"src/App.jsx": "export default function App() { return <p>ok</p>; }"})


class Script:
    """The generator's caller: canned answers in order, every request kept."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.requests: list[Messages] = []

    async def __call__(self, messages: Messages) -> ModelResponse:
        self.requests.append(messages)
        return ModelResponse(text=self.answers.pop(0), usage={"completion_tokens": 1})


class Tools:
    """GenerationTools whose build fails for the answers in `failing` with `log` (the injected fault)."""

    task_id = "t1"
    turn = 1

    def __init__(self, failing: set[str], *, log: str = "src/App.jsx:1:27: ERROR: Expected \")\"",
                 status: str = "build_failed") -> None:
        self.failing, self.log, self.status, self.built = failing, log, status, []

    async def build(self, text: str) -> BuildCheck:
        self.built.append(text)
        files = parse_model_output(text).files
        ok = text not in self.failing
        result = BuildResult("ok" if ok else self.status, log="" if ok else self.log)
        return BuildCheck(text=text, ok=ok, log=result.log, files=files, build=result)


def test_a_failed_build_is_repaired_by_the_same_model_with_its_log_and_source() -> None:
    call, tools = Script(BROKEN, FIXED), Tools({BROKEN})
    generation = asyncio.run(SelfRepair().generate(PAYLOAD, call, tools))
    assert [r.purpose for r in generation.rounds] == ["answer", "repair"]
    assert generation.builds == [False, True] and generation.final.text == FIXED
    assert tools.built == [BROKEN, FIXED]
    repair = call.requests[1]
    assert repair[:2] == PAYLOAD
    assert repair[2]["role"] == "assistant" and "export default function App( {" in repair[2]["content"]
    assert repair[3]["role"] == "user" and 'ERROR: Expected ")"' in repair[3]["content"]
    assert generation.usage == {"completion_tokens": 2}


def test_log_and_source_are_cut_to_the_papers_limits() -> None:
    assert (REPAIR_ROUNDS, LOG_CHARS, SOURCE_CHARS) == (5, 3_000, 40_000)  # I-WebGenBench C.3
    big = render_json_output("", {"src/App.jsx": "x" * 50_000})
    log = "E" * 2_000 + "F" * 2_000
    call, tools = Script(big, FIXED), Tools({big}, log=log)
    asyncio.run(SelfRepair().generate(PAYLOAD, call, tools))
    source, prompt = call.requests[1][2]["content"], call.requests[1][3]["content"]
    assert len(source) == 40_000
    assert "E" * 2_000 + "F" * 1_000 in prompt and "F" * 1_001 not in prompt
    assert "first 3000 of 4000 characters" in prompt


def test_an_app_that_never_builds_gets_k_repair_rounds() -> None:
    call, tools = Script(*[BROKEN] * 6), Tools({BROKEN})
    generation = asyncio.run(SelfRepair().generate(PAYLOAD, call, tools))
    assert len(generation.rounds) == 1 + 5 and generation.builds == [False] * 6
    assert [r.index for r in generation.rounds] == [1, 2, 3, 4, 5, 6]
    assert not call.answers


def test_no_repair_when_the_sandbox_itself_failed_or_k_is_zero() -> None:
    generation = asyncio.run(SelfRepair().generate(PAYLOAD, Script(BROKEN), Tools({BROKEN}, status="infra")))
    assert generation.builds == [False]
    generation = asyncio.run(SelfRepair(rounds=0).generate(PAYLOAD, Script(BROKEN), Tools({BROKEN})))
    assert generation.builds == [False]
    with pytest.raises(ValueError, match="rounds must be >= 0"):
        SelfRepair(rounds=-1)


def test_an_unparsable_answer_is_repaired_from_its_raw_text() -> None:
    class ParsingTools(Tools):
        async def build(self, text: str) -> BuildCheck:
            if text == "no files here":
                return BuildCheck(text=text, ok=False, log="the answer holds no parsable files", files={})
            return await super().build(text)

    call = Script("no files here", FIXED)
    generation = asyncio.run(SelfRepair().generate(PAYLOAD, call, ParsingTools(set())))
    assert generation.builds == [False, True] and call.requests[1][2]["content"] == "no files here"


class RoleModel(ModelBase):
    """A splitter or merger role answering from a script (Model protocol)."""

    def __init__(self, name: str, *answers: str) -> None:
        self.name, self.answers, self.requests = name, list(answers), []

    async def generate(self, request: GenerationRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.answers.pop(0), usage={"completion_tokens": 10})

    async def aclose(self) -> None:
        return None


PLAN = json.dumps({"blocks": [{"name": "Controls", "description": "sliders for the birth and death rates"},
                              {"name": "PopulationChart", "description": "the two populations over time"}]})


def block(name: str) -> str:
    return render_json_output(name, {f"src/blocks/{name}.jsx": f"export default function {name}() {{ return null; }}"})


def test_the_block_pipeline_splits_generates_each_block_and_merges() -> None:
    splitter, merger = RoleModel("splitter", PLAN), RoleModel("merger", FIXED)
    call = Script(block("Controls"), block("PopulationChart"))
    strategy = iwebgen_strategy("blocks", repair_rounds=5, roles={"splitter": splitter, "merger": merger})
    tools = Tools(set())
    generation = asyncio.run(strategy.generate(PAYLOAD, call, tools))
    assert generation.strategy == "blocks+self_repair"
    assert [r.purpose for r in generation.rounds] == ["split", "block:Controls", "block:PopulationChart", "merge"]
    assert [r.index for r in generation.rounds] == [1, 2, 3, 4]
    assert generation.builds == [True] and tools.built == [FIXED]  # only the merged app is built
    assert "predator-prey" in splitter.requests[0].messages[-1]["content"]
    assert splitter.requests[0].response_format is not None  # the plan is asked for by its JSON schema
    assert "`Controls`" in call.requests[0][-1]["content"] and "birth and death" in call.requests[0][-1]["content"]
    merged = merger.requests[0].messages[-1]["content"]
    assert "```src/blocks/Controls.jsx" in merged and "```src/blocks/PopulationChart.jsx" in merged
    assert (merger.requests[0].task_id, merger.requests[0].turn) == ("t1", 1)
    assert generation.usage == {"completion_tokens": 10 + 1 + 1 + 10}


def test_a_merged_app_that_does_not_build_is_repaired_by_the_generator() -> None:
    splitter, merger = RoleModel("splitter", PLAN), RoleModel("merger", BROKEN)
    call = Script(block("Controls"), block("PopulationChart"), FIXED)
    strategy = iwebgen_strategy("blocks", repair_rounds=5, roles={"splitter": splitter, "merger": merger})
    generation = asyncio.run(strategy.generate(PAYLOAD, call, Tools({BROKEN})))
    assert [r.purpose for r in generation.rounds][-2:] == ["merge", "repair"] and generation.builds == [False, True]


def test_a_splitter_without_a_usable_plan_fails_the_slot_with_its_reasons() -> None:
    repeated = json.dumps({"blocks": [{"name": "A", "description": "x"}, {"name": "A", "description": "y"}]})
    splitter = RoleModel("splitter", repeated, repeated, repeated)
    with pytest.raises(ProviderError, match=r"splitter gave no usable block list.*repeated: \['A'\]"):
        asyncio.run(BlockPipeline(splitter, RoleModel("merger")).generate(PAYLOAD, Script(), Tools(set())))


def test_pipeline_roles_and_choices() -> None:
    assert pipeline_roles("blocks") == ("splitter", "merger") and pipeline_roles("single") == ()
    assert iwebgen_strategy("single", repair_rounds=5, roles={}).name == "self_repair"
    assert iwebgen_strategy("single", repair_rounds=None, roles={}).name == "single_pass"
    roles = {"splitter": RoleModel("s"), "merger": RoleModel("m")}
    assert iwebgen_strategy("blocks", repair_rounds=None, roles=roles).name == "blocks"
    with pytest.raises(ValueError, match=r"needs the model role\(s\) \['merger'\]"):
        iwebgen_strategy("blocks", repair_rounds=5, roles={"splitter": RoleModel("s")})
    with pytest.raises(ValueError, match="suite.pipeline = 'nope'"):
        iwebgen_strategy("nope", repair_rounds=5, roles={})  # type: ignore[arg-type]


def test_the_suite_builds_its_strategy_from_its_settings_and_roles() -> None:
    from runner.browser.launch import BrowserPools
    from runner.suites.base import SuiteContext
    from runner.suites.registry import build_suite
    from tests.conftest import REPO_ROOT

    def suite(**settings: object):
        built = build_suite({"name": "iwebgen", **settings}, project_root=REPO_ROOT)
        built.bind(SuiteContext(browsers=BrowserPools([]), sandbox=object(),  # type: ignore[arg-type]
                                roles={"splitter": RoleModel("s"), "merger": RoleModel("m")}))
        return built

    assert suite().required_roles == () and suite().generation_strategy().name == "single_pass"
    repair = suite(generation="self_repair", repair_rounds=3).generation_strategy()
    assert (repair.name, repair.rounds) == ("self_repair", 3)  # type: ignore[attr-defined]
    blocks = suite(pipeline="blocks", generation="self_repair")
    assert blocks.required_roles == ("splitter", "merger")
    assert blocks.generation_strategy().name == "blocks+self_repair"
    assert suite(pipeline="blocks").generation_strategy().name == "blocks"


def test_the_suite_config_generates_in_a_single_pass_with_repair_an_option() -> None:
    """I-WebGenBench §4.1: "in a single pass without tool use or iterative refinement"; C.3's rounds on request."""
    from runner.run.validation import validate_config
    from tests.test_presets import composed

    assert validate_config(composed("suite=iwebgen")).suite.model_dump()["generation"] == "single_pass"
    chosen = validate_config(composed("suite=iwebgen", "suite.generation=self_repair")).suite.model_dump()
    assert (chosen["generation"], chosen["repair_rounds"]) == ("self_repair", 5)
