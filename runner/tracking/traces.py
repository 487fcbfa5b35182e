"""Model calls as MLflow traces, and the experiment tag that picks the MLflow UI's landing view.

MLflow 3's UI opens a GenAI experiment on its traces and a model-development experiment on its runs table;
it reads which one from the experiment tag `mlflow.experimentKind` (values `genai_development` and
`custom_model_development`, the ones its own kind selector writes). An experiment that holds traces of model
calls is tagged for the traces; one that holds only runs (the oracle, rule judges) for the runs table.

Each call becomes one trace with one CHAT_MODEL span, written straight to the tracking store of the run's
own URI: MLflow's fluent tracing goes through a process-global tracer and tracking URI, which the runner
never sets (its MlflowClient calls name their URI and run ids, as they must from worker threads). The
trace is linked to its task's nested run (`mlflow.sourceRun`, which the run page's Traces tab and
`search_traces(run_id=...)` read) and grouped into a session per episode (`mlflow.trace.session`), so the
GenAI views show each episode's conversation in order.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mlflow.entities import SpanType, TraceData, TraceInfo, TraceLocation, TraceState
from mlflow.entities.span import LiveSpan
from mlflow.tracing.client import TracingClient
from mlflow.tracing.constant import SpanAttributeKey, TraceMetadataKey
from mlflow.tracing.utils import generate_trace_id_v3
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

from runner.tracking.call_traces import ModelCall

__all__ = [
    "EXPERIMENT_KIND_TAG",
    "KIND_GENAI",
    "KIND_RUNS",
    "episode_session",
    "token_usage",
    "write_call_trace",
]

EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
KIND_GENAI = "genai_development"  # lands on the traces (GenAI overview)
KIND_RUNS = "custom_model_development"  # lands on the runs table
KIND_SOURCE_TAG = "genui.experiment_kind_source"  # "runner" while the runner chose it (a user's choice is kept)

ROLE_TAG = "genui.role"
TASK_TAG = "genui.task_id"
TURN_TAG = "genui.turn"
MODEL_TAG = "genui.model"
JOB_RUN_TAG = "genui.job_run_id"

PREVIEW_CHARS = 1000
_DATA_URL = re.compile(r"^data:([\w/+.-]+);base64,(.*)$", re.S)

# A private tracer: spans are built here and written by TracingClient, never exported by a global provider.
_tracer = TracerProvider(resource=Resource.create({"service.name": "genui-runner"})).get_tracer("genui-runner")


def token_usage(usage: dict[str, int]) -> dict[str, int]:
    """OpenAI usage names -> MLflow's (input_tokens, output_tokens, total_tokens), which the UI sums."""
    inputs = int(usage.get("prompt_tokens", usage.get("input_tokens", 0)))
    outputs = int(usage.get("completion_tokens", usage.get("output_tokens", 0)))
    return {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": int(usage.get("total_tokens", inputs + outputs))}


def _without_images(value: Any) -> Any:
    """Screenshots travel as base64 data URLs (megabytes each); a trace keeps their type and size only."""
    if isinstance(value, str):
        match = _DATA_URL.match(value)
        return f"[{match.group(1)} image, {len(match.group(2)) * 3 // 4} bytes, kept in the turn's evidence]" if match else value
    if isinstance(value, list):
        return [_without_images(item) for item in value]
    if isinstance(value, dict):
        return {key: _without_images(item) for key, item in value.items()}
    return value


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict) and part.get("type") == "text")
    return str(content or "")


def episode_session(job_run_id: str, task_id: str) -> str:
    """One session per episode (a task within one job), so the GenAI views group its calls."""
    return f"{job_run_id}/{task_id}" if task_id else job_run_id


def write_call_trace(client: TracingClient, *, experiment_id: str, source_run_id: str, job_run_id: str,
                     call: ModelCall) -> str:
    """Write one call as a finished trace; returns its trace id."""
    name = f"{call.role} {call.model}"
    messages = _without_images(call.messages)
    usage = token_usage(call.usage) if call.usage else None
    end_ns = call.started_ns + int(call.latency_s * 1e9)
    otel_span = _tracer.start_span(name, start_time=call.started_ns)
    trace_id = generate_trace_id_v3(otel_span)
    span = LiveSpan(otel_span, trace_id, SpanType.CHAT_MODEL)
    span.set_inputs({"messages": messages, **({"response_format": call.response_format} if call.response_format else {})})
    span.set_outputs({"choices": [{"index": 0, "message": {"role": "assistant", "content": call.text}}]})
    attributes: dict[str, Any] = {
        ROLE_TAG: call.role, TASK_TAG: call.task_id, TURN_TAG: call.turn, "genui.cached": call.cached,
        "genui.latency_s": round(call.latency_s, 4), SpanAttributeKey.MODEL: call.model,
        SpanAttributeKey.MESSAGE_FORMAT: "openai",
    }
    if usage is not None:
        attributes[SpanAttributeKey.CHAT_USAGE] = usage
    if call.error:
        attributes["genui.error"] = call.error
    span.set_attributes(attributes)
    span.end(end_time_ns=end_ns)
    metadata = {
        TraceMetadataKey.SOURCE_RUN: source_run_id,
        TraceMetadataKey.TRACE_SESSION: episode_session(job_run_id, call.task_id),
    }
    if usage is not None:
        metadata[TraceMetadataKey.TOKEN_USAGE] = json.dumps(usage)
    last_user = next((m for m in reversed(call.messages) if m.get("role") == "user"), call.messages[-1] if call.messages else {})
    info = TraceInfo(
        trace_id=trace_id,
        trace_location=TraceLocation.from_experiment_id(experiment_id),
        request_time=call.started_ns // 1_000_000,
        execution_duration=int(call.latency_s * 1000),
        state=TraceState.ERROR if call.error else TraceState.OK,
        request_preview=_message_text(last_user)[:PREVIEW_CHARS],
        response_preview=(call.text or call.error or "")[:PREVIEW_CHARS],
        trace_metadata=metadata,
        tags={"mlflow.traceName": name, ROLE_TAG: call.role, TASK_TAG: call.task_id, TURN_TAG: str(call.turn),
              MODEL_TAG: call.model, JOB_RUN_TAG: job_run_id},
    )
    stored = client.start_trace(info)
    spans = [span.to_immutable_span()]
    try:
        client.log_spans(experiment_id, spans)
    except NotImplementedError:  # a store without span tables keeps spans as a trace artifact
        client._upload_trace_data(stored, TraceData(spans=spans))
    return stored.trace_id
