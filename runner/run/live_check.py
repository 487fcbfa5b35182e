"""One live request per hosted model role before the first slot, so a refused parameter or a bad key stops the run
in seconds, not as a provider error in every slot.

Each model role the run calls over HTTP that the runner does not start itself (a hosted API, a local or attached
server; not a vLLM server the run launches, whose start is its own check) gets one minimal request built exactly as
the run builds its requests: the role's dialect, output cap, temperature and, where the role sends them, its
structured-output mode (with a one-field schema) and an image. All roles are checked at once; every failure is
listed with the role, its config key and the provider's own message (preflight raises them as a PreflightError:
exit code 2).
`run.live_check=false` skips it. No answer is cached: the check never stands in for a slot's call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from runner.models.base import GenerationRequest, ProviderError
from runner.models.registry import build_model
from runner.models.structured import response_format_for
from runner.run.role_requests import RoleRequest, role_requests

__all__ = ["LIVE_CHECK_TIMEOUT_S", "check_live", "live_roles", "probe_messages"]

log = logging.getLogger(__name__)

# A healthy endpoint answers a one-line request well within this, a reasoning model included; longer is a problem.
LIVE_CHECK_TIMEOUT_S = 180.0
SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
          "additionalProperties": False}
PROMPT = ("This is a connection check before a benchmark run. Answer with the JSON object {\"ok\": true} and "
          "nothing else.")
# A 64 x 64 white PNG: the image a role that sends images is checked with.
IMAGE_URL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAIAAAAlC+aJAAAATUlEQVR42u3PQQ0AAAgEILV/5zOFDzdoQ"
             "Cepz6aeExAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQELi3cqoDfaKuZM4AAAAASUVORK5CYII=")


def live_roles(config: Any, suite: Any) -> list[RoleRequest]:
    """The roles the check calls: endpoint models whose server the run does not start (vLLM `mode: attach` is
    checked, `process` and `docker` are not)."""
    chosen = []
    for request in role_requests(config, suite):
        if request.endpoint is None:
            continue
        server = request.settings.get("server")
        if isinstance(server, dict) and server.get("mode", "process") != "attach":
            continue
        chosen.append(request)
    return chosen


def probe_messages(images: bool) -> list[dict[str, Any]]:
    if not images:
        return [{"role": "user", "content": PROMPT}]
    return [{"role": "user", "content": [{"type": "text", "text": PROMPT},
                                         {"type": "image_url", "image_url": {"url": IMAGE_URL}}]}]


def _fix(request: RoleRequest, error: BaseException) -> str:
    status = getattr(error, "status", None)
    text = str(error)
    key_env = request.settings.get("api_key_env")
    if status in (401, 403) or " 401 " in text or " 403 " in text:
        where = f"the key in {key_env}" if key_env else "the server's key (api_key_env)"
        return f"check {where}; or skip this check with run.live_check=false"
    if status is not None or "HTTP 4" in text:
        return (f"the provider refused a parameter: fix {request.key} (its dialect, fixed_temperature, max_tokens; "
                f"docs/presets.md lists what each provider is sent), or its role's structured_output")
    return "check that the endpoint is up and reachable, or skip this check with run.live_check=false"


async def _probe(request: RoleRequest, timeout_s: float) -> tuple[RoleRequest, BaseException | None, float]:
    started = time.perf_counter()
    model = build_model(request.settings, cache=None)
    response_format = (response_format_for(SCHEMA, name="live_check", mode=request.structured, strict=request.strict)
                       if request.structured else None)
    try:
        await asyncio.wait_for(model.generate(GenerationRequest(
            task_id="live-check", turn=0, messages=probe_messages(request.images), response_format=response_format)),
            timeout=timeout_s)
        return request, None, time.perf_counter() - started
    except (ProviderError, asyncio.TimeoutError) as error:
        return request, error, time.perf_counter() - started
    finally:
        await model.aclose()


async def check_live(config: Any, suite: Any, *,
                     timeout_s: float = LIVE_CHECK_TIMEOUT_S) -> list[tuple[str, str, str]]:
    """(config key, what failed, the fix) per role whose live request failed; [] when all answered."""
    requests = live_roles(config, suite)
    results = await asyncio.gather(*(_probe(request, timeout_s) for request in requests))
    problems = []
    for request, error, seconds in results:
        url = request.settings.get("base_url") or (request.settings.get("server") or {}).get("base_url")
        where = f"{request.role} {request.name!r} at {url}"
        if error is None:
            log.info("live check: %s answered in %.1f s", where, seconds)
            continue
        message = str(error) if not isinstance(error, asyncio.TimeoutError) else f"no answer within {timeout_s:g} s"
        problems.append((request.key, f"live check of {where}: {message}", _fix(request, error)))
    return problems
