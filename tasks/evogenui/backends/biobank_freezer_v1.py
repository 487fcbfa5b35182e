"""Backend of the Halvorsen Lab biobank freezer ledger (EvoGenUI tool-grounded task, fixture biobank_freezer_v1).

Authoritative: bio_list_freezers, bio_list_samples, bio_check_transfer, bio_get_audit_log (read) and
bio_transfer_sample, bio_flag_sample (write). A transfer needs the token of a passing bio_check_transfer for
the same sample and destination, so a write is always grounded in a fresh check. Not authoritative:
bio_inventory_export (last Monday's CSV export, stale placements), bio_simulate_transfer (a dry run that moves
nothing) and bio_alarm_history (past alarm events, not the current alarm). Writes are idempotent.
Standard library only: the artifact server imports this module inside the sandbox.
"""

from __future__ import annotations

import copy
from typing import Any

_FREEZERS = {
    "FZ-1": {"label": "Upright -80 °C, room 214", "set_point_c": -80, "capacity": 6,
             "alarm": "Door seal fault: move samples out by 2026-03-06"},
    "FZ-2": {"label": "Chest -80 °C, room 216", "set_point_c": -80, "capacity": 6, "alarm": ""},
    "FZ-3": {"label": "Upright -20 °C, room 214", "set_point_c": -20, "capacity": 4, "alarm": ""},
}
_SAMPLES = {
    "S-1001": {"label": "Plasma, cohort A", "freezer_id": "FZ-1", "rack": "R2", "storage_temp_c": -80, "flag": "none"},
    "S-1002": {"label": "RNA extract, study B", "freezer_id": "FZ-1", "rack": "R2", "storage_temp_c": -80, "flag": "none"},
    "S-1003": {"label": "Serum pool C", "freezer_id": "FZ-3", "rack": "R1", "storage_temp_c": -20, "flag": "none"},
    "S-1004": {"label": "DNA panel D", "freezer_id": "FZ-2", "rack": "R1", "storage_temp_c": -80, "flag": "none"},
    "S-1005": {"label": "Buffer aliquots", "freezer_id": "FZ-1", "rack": "R3", "storage_temp_c": -20, "flag": "none"},
}


def initial_state() -> dict[str, Any]:
    return {"freezers": copy.deepcopy(_FREEZERS), "samples": copy.deepcopy(_SAMPLES), "transfers": {}, "audit": []}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


_SAMPLE_ID = {"type": "string", "pattern": "^S-[0-9]{4}$"}
_FREEZER_ID = {"type": "string", "enum": sorted(_FREEZERS)}
_SAMPLE = {"type": "object", "properties": {
    "sample_id": {"type": "string"}, "label": {"type": "string"}, "freezer_id": {"type": "string"}, "rack": {"type": "string"},
    "storage_temp_c": {"type": "integer"}, "flag": {"type": "string"}},
    "required": ["sample_id", "label", "freezer_id", "rack", "storage_temp_c", "flag"]}
_FREEZER = {"type": "object", "properties": {
    "freezer_id": {"type": "string"}, "label": {"type": "string"}, "set_point_c": {"type": "integer"},
    "capacity": {"type": "integer"}, "used": {"type": "integer"}, "alarm": {"type": "string"}},
    "required": ["freezer_id", "label", "set_point_c", "capacity", "used", "alarm"]}

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "bio_list_freezers": {
        "description": "Live freezer status: set point, capacity, positions used and any active alarm.",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"freezers": {"type": "array", "items": _FREEZER}}, "required": ["freezers"]},
    },
    "bio_list_samples": {
        "description": "Live sample placements, optionally for one freezer: label, rack, required storage temperature and flag.",
        "inputSchema": _obj({"freezer_id": _FREEZER_ID}),
        "outputSchema": {"type": "object", "properties": {"samples": {"type": "array", "items": _SAMPLE}}, "required": ["samples"]},
    },
    "bio_inventory_export": {
        "description": "The weekly inventory CSV export (generated Monday 06:00) as rows.",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"rows": {"type": "array", "items": _SAMPLE}, "generated": {"type": "string"}},
                         "required": ["rows", "generated"]},
    },
    "bio_check_transfer": {
        "description": "Validate moving a sample to another freezer (temperature, capacity, alarms). Returns a check token when allowed. Moves nothing.",
        "inputSchema": _obj({"sample_id": _SAMPLE_ID, "to_freezer": _FREEZER_ID}, ["sample_id", "to_freezer"]),
        "outputSchema": {"type": "object", "properties": {
            "allowed": {"type": "boolean"}, "reasons": {"type": "array", "items": {"type": "string"}},
            "check_token": {"type": "string"}, "note": {"type": "string"}}, "required": ["allowed", "reasons"]},
    },
    "bio_simulate_transfer": {
        "description": "Dry-run a transfer and return what the placement would look like. Nothing is moved or logged.",
        "inputSchema": _obj({"sample_id": _SAMPLE_ID, "to_freezer": _FREEZER_ID}, ["sample_id", "to_freezer"]),
        "outputSchema": {"type": "object", "properties": {"persisted": {"const": False}, "would_be": {"type": "object"}},
                         "required": ["persisted", "would_be"]},
    },
    "bio_transfer_sample": {
        "description": "Move a sample to another freezer and log it. Requires the check_token of a passing bio_check_transfer for the same sample and destination.",
        "inputSchema": _obj({"sample_id": _SAMPLE_ID, "to_freezer": _FREEZER_ID, "check_token": {"type": "string", "minLength": 1}},
                            ["sample_id", "to_freezer", "check_token"]),
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}, "error": {"type": "string"}, "transfer": {
            "type": "object", "properties": {"transfer_id": {"type": "string"}, "sample_id": {"type": "string"},
                                             "from_freezer": {"type": "string"}, "to_freezer": {"type": "string"}},
            "required": ["transfer_id", "sample_id", "from_freezer", "to_freezer"]}}, "required": ["ok"]},
    },
    "bio_get_audit_log": {
        "description": "The chain-of-custody log: every transfer and flag change, oldest first.",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "object", "properties": {
            "seq": {"type": "integer"}, "action": {"type": "string"}, "sample_id": {"type": "string"}, "detail": {"type": "string"}},
            "required": ["seq", "action", "sample_id", "detail"]}}}, "required": ["entries"]},
    },
    "bio_flag_sample": {
        "description": "Set or clear a sample's handling flag ('thaw-risk' or 'none').",
        "inputSchema": _obj({"sample_id": _SAMPLE_ID, "flag": {"type": "string", "enum": ["thaw-risk", "none"]}}, ["sample_id", "flag"]),
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}, "error": {"type": "string"}, "sample": _SAMPLE},
                         "required": ["ok"]},
    },
    "bio_alarm_history": {
        "description": "Past alarm events of a freezer (resolved events only).",
        "inputSchema": _obj({"freezer_id": _FREEZER_ID}, ["freezer_id"]),
        "outputSchema": {"type": "object", "properties": {"events": {"type": "array", "items": {"type": "string"}}}, "required": ["events"]},
    },
}


def _ensure(state: dict[str, Any]) -> None:
    if "samples" not in state:  # standalone use: seed the default lab
        state.update(initial_state())


def _sample_view(state: dict[str, Any], sample_id: str) -> dict[str, Any]:
    return {"sample_id": sample_id, **state["samples"][sample_id]}


def _used(state: dict[str, Any], freezer_id: str) -> int:
    return sum(s["freezer_id"] == freezer_id for s in state["samples"].values())


def _audit(state: dict[str, Any], action: str, sample_id: str, detail: str) -> None:
    state["audit"].append({"seq": len(state["audit"]) + 1, "action": action, "sample_id": sample_id, "detail": detail})


def _check(state: dict[str, Any], sample_id: str, to: str) -> tuple[list[str], str]:
    """(reasons the move is refused, note). A move that was already made checks as allowed again (idempotent)."""
    sample = state["samples"].get(sample_id)
    if sample is None:
        return [f"unknown sample {sample_id}"], ""
    transfer_id = f"TX-{sample_id}-{to}"
    if sample["freezer_id"] == to:
        if transfer_id in state["transfers"]:
            return [], f"already moved to {to} ({transfer_id})"
        return [f"{sample_id} is already in {to}"], ""
    freezer = state["freezers"][to]
    reasons = []
    if freezer["set_point_c"] > sample["storage_temp_c"]:
        reasons.append(f"{to} runs at {freezer['set_point_c']} °C; sample needs {sample['storage_temp_c']} °C")
    if freezer["alarm"]:
        reasons.append(f"{to} has an active alarm")
    if _used(state, to) >= freezer["capacity"]:
        reasons.append(f"{to} is full")
    return reasons, ""


def invoke(tool: str, args: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    _ensure(state)
    if tool == "bio_list_freezers":
        return {"freezers": [{"freezer_id": f, **v, "used": _used(state, f)} for f, v in state["freezers"].items()]}
    if tool == "bio_list_samples":
        wanted = args.get("freezer_id")
        return {"samples": [_sample_view(state, s) for s, v in state["samples"].items() if not wanted or v["freezer_id"] == wanted]}
    if tool == "bio_inventory_export":
        stale = copy.deepcopy(_SAMPLES)
        stale["S-1002"]["freezer_id"] = "FZ-2"  # as exported before last week's reshuffle
        return {"rows": [{"sample_id": s, **v} for s, v in stale.items()], "generated": "2026-02-23T06:00"}
    if tool == "bio_check_transfer":
        reasons, note = _check(state, args["sample_id"], args["to_freezer"])
        result: dict[str, Any] = {"allowed": not reasons, "reasons": reasons}
        if not reasons:
            result["check_token"] = f"CHK-{args['sample_id']}-{args['to_freezer']}"
        if note:
            result["note"] = note
        return result
    if tool == "bio_simulate_transfer":
        sample = state["samples"].get(args["sample_id"], {})
        return {"persisted": False, "would_be": {**sample, "freezer_id": args["to_freezer"]}}
    if tool == "bio_transfer_sample":
        sample_id, to = args["sample_id"], args["to_freezer"]
        reasons, _ = _check(state, sample_id, to)
        if reasons:
            return {"ok": False, "error": "; ".join(reasons)}
        if args["check_token"] != f"CHK-{sample_id}-{to}":
            return {"ok": False, "error": "missing or stale check token: run bio_check_transfer first"}
        transfer_id = f"TX-{sample_id}-{to}"
        if transfer_id not in state["transfers"]:
            source = state["samples"][sample_id]["freezer_id"]
            state["transfers"][transfer_id] = {"sample_id": sample_id, "from_freezer": source, "to_freezer": to}
            state["samples"][sample_id]["freezer_id"] = to
            _audit(state, "transfer", sample_id, f"{transfer_id}: {sample_id} {source} → {to}")
        return {"ok": True, "transfer": {"transfer_id": transfer_id, **state["transfers"][transfer_id]}}
    if tool == "bio_get_audit_log":
        return {"entries": copy.deepcopy(state["audit"])}
    if tool == "bio_flag_sample":
        sample = state["samples"].get(args["sample_id"])
        if sample is None:
            return {"ok": False, "error": f"unknown sample {args['sample_id']}"}
        if sample["flag"] != args["flag"]:
            sample["flag"] = args["flag"]
            _audit(state, "flag", args["sample_id"], f"flag {args['sample_id']} {args['flag']}")
        return {"ok": True, "sample": _sample_view(state, args["sample_id"])}
    if tool == "bio_alarm_history":
        return {"events": ["2025-11-02 compressor restart (resolved)"] if args["freezer_id"] == "FZ-1" else []}
    raise ValueError(f"unknown tool {tool!r}")
