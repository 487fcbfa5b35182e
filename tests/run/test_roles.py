"""Model roles from one source (runner/run/roles.py): a suite's role is composed from conf/model into `roles.<name>`,
validated like the generator, built with the response cache, wrapped for call traces when built and served by
role; a suite that declares a role the config lacks gets an error naming the key."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.run import preflight
from runner.tracking.call_traces import TracedModel
from runner.errors import ConfigError
from runner.run.validation import compose_config, validate_config
from runner.models.cache import ResponseCache
from runner.models.openai_provider import OpenAIModel
from runner.models.role import role_model_settings
from runner.run.roles import RunRoles, check_declared_roles, roles_used, server_claims
from runner.suites.registry import build_suite
from tests.conftest import REPO_ROOT


def _config(*overrides: str):
    return compose_config(overrides, project_root=REPO_ROOT)


VLLM_CAPTION = ("+roles.caption={name:captioner,provider:vllm,server:{model_path:/weights,tensor_parallel_size:2,"
                "gpu_memory_utilization:0.3}}")


def test_a_suite_role_is_composed_from_the_model_group_and_validated() -> None:
    config = _config("suite=macro", "suite.caption=true", "+model@roles.caption=gpt-4o")
    assert config.roles["caption"].name == "gpt-4o" and config.roles["caption"].provider == "openai"
    assert role_model_settings(config)["caption"]["model"] == "gpt-4o-2024-08-06"
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    assert suite.required_roles == ("caption",)
    check_declared_roles(config, suite)
    assert roles_used(config, suite) == ["generator", "judge", "caption"]
    with pytest.raises(ConfigError, match=r"roles\.caption\.temprature: unknown key"):
        _config("suite=macro", "+model@roles.caption=gpt-4o", "+roles.caption.temprature=0")


def test_a_declared_role_the_config_lacks_names_its_key() -> None:
    config = _config("suite=macro", "suite.caption=true")
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    with pytest.raises(ConfigError, match=r"roles\.caption: required by suite 'macro' but missing.*"
                                          r"\+model@roles\.caption="):
        check_declared_roles(config, suite)
    with pytest.raises(ConfigError, match=r"roles\.caption: required"):  # the preflight says so first
        asyncio.run(preflight.run_preflight(config, suite))
    assert build_suite(_config("suite=micro").suite, project_root=REPO_ROOT).required_roles == ()
    with pytest.raises(ConfigError, match=r"roles\.judge: 'judge' is a run role"):
        check_declared_roles(_config("suite=smoke", "+model@roles.judge=gpt-4o"),
                             build_suite(_config("suite=smoke").suite, project_root=REPO_ROOT))


def test_a_vllm_suite_role_claims_gpus_and_is_served_by_role(tmp_path: Path) -> None:
    config = _config("suite=macro", "suite.caption=true", VLLM_CAPTION)
    suite = build_suite(config.suite, project_root=REPO_ROOT)
    [claim] = server_claims(config, roles_used(config, suite))
    assert (claim.role, claim.name, claim.tensor_parallel_size, claim.fraction) == ("caption", "captioner", 2, 0.3)
    roles = RunRoles(config, cache=None, log_dir=tmp_path / "servers")
    caption = roles.model("caption")
    assert roles.model("caption") is caption  # built once
    assert roles.served.names("caption") == ["captioner"] and roles.served.names("generator") == []
    generator = roles.model("generator", tasks=[])
    assert type(generator).__name__ == "OracleModel"
    asyncio.run(roles.aclose())


def test_role_models_get_the_response_cache_and_are_traced_when_built(tmp_path: Path) -> None:
    config = _config("suite=macro", "suite.caption=true",
                     "+roles.caption={name:captioner,provider:openai,model:c,base_url:'http://127.0.0.1:9/v1'}")
    cache = ResponseCache(tmp_path / "responses.sqlite")
    roles = RunRoles(config, cache=cache, log_dir=tmp_path / "servers", traced=True)
    caption = roles.model("caption")
    assert isinstance(caption, TracedModel) and caption.role == "caption"
    assert isinstance(caption.inner, OpenAIModel) and caption.inner._cache is cache
    assert not isinstance(roles.model("generator", tasks=[]), TracedModel)  # replays are never traced
    untraced = RunRoles(config, cache=cache, log_dir=tmp_path / "servers")
    assert isinstance(untraced.model("caption"), OpenAIModel)
    asyncio.run(roles.aclose())
    asyncio.run(untraced.aclose())


def test_roles_with_the_same_served_weights_and_flags_share_one_server(tmp_path: Path) -> None:
    """EvoGenUI-Bench Table 2 serves MiMo-V2.5 as both actor and evaluator (§5.2): one server, started once,
    claiming its GPUs once; a role whose server flags differ gets its own."""
    config = _config("+experiment=evogenui-table2", "model=oracle")
    assert {"actor", "judge"} <= set(role_model_settings(config))
    roles = RunRoles(config, cache=None, log_dir=tmp_path / "servers")
    actor, judge = roles.model("actor"), roles.model("judge")
    assert actor.server is judge.server  # one server object, started by whichever role calls first
    assert judge.settings.served_model_name == actor.settings.served_model_name
    claims = server_claims(config, ["generator", "actor", "judge"])
    assert len(claims) == 2 and claims[0].server_key == claims[1].server_key is not None
    asyncio.run(roles.aclose())

    apart = _config("+experiment=evogenui-table2", "model=oracle", "++judge.options.model.server.max_model_len=8192")
    roles = RunRoles(apart, cache=None, log_dir=tmp_path / "servers")
    assert roles.model("actor").server is not roles.model("judge").server
    claims = server_claims(apart, ["generator", "actor", "judge"])
    assert claims[0].server_key != claims[1].server_key
    asyncio.run(roles.aclose())


def test_a_shared_server_stops_when_its_last_holder_lets_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between phases a role's server is stopped (RunRoles.stop); a server another role still holds keeps
    running until that role lets go too."""
    from runner.models.vllm_server import VLLMServer

    config = _config("+experiment=evogenui-table2", "model=oracle")
    roles = RunRoles(config, cache=None, log_dir=tmp_path / "servers")
    actor, judge = roles.model("actor"), roles.model("judge")
    stops: list[str] = []

    async def stopped(server: VLLMServer) -> None:  # no process here: record the stop instead
        stops.append(server.name)

    monkeypatch.setattr(VLLMServer, "aclose", stopped)

    async def scenario() -> None:
        actor.server.hold(actor)
        judge.server.hold(judge)
        await roles.stop("actor")
        assert stops == []  # the judge still holds it
        await roles.stop("judge")
        assert stops == [actor.server.name]

    asyncio.run(scenario())


def test_a_roles_model_is_built_from_the_settings_validation_parsed(monkeypatch, tmp_path) -> None:
    """The run's models take their provider settings from config validation, not from a second parse of the
    section (and a judge's endpoint likewise from its options)."""
    from runner.judges.llm import build_endpoint_model
    from runner.judges.llm_settings import LLMJudgeSettings
    from runner.models.openai_provider import OpenAIModelSettings

    monkeypatch.setenv("OPENAI_API_KEY", "not-used")  # nothing is sent
    config = _config("model=gpt-4o")
    parses = []
    original = OpenAIModelSettings.model_validate.__func__

    def counting(cls, *args, **kwargs):
        parses.append(cls.__name__)
        return original(cls, *args, **kwargs)

    monkeypatch.setattr(OpenAIModelSettings, "model_validate", classmethod(counting))
    model = RunRoles(config, cache=None, log_dir=tmp_path / "servers").model("generator")
    assert model.settings is config.model_roles["generator"].settings and parses == []
    judge = LLMJudgeSettings.from_options({"model": {"provider": "openai", "model": "m", "base_url": "http://127.0.0.1:9"}},
                                          prefix="judge.options")
    parses.clear()
    assert build_endpoint_model(judge).settings is judge.endpoint and parses == []
