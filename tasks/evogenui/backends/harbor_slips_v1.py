"""Backend of the Gullhaven Marina slip reservation console (EvoGenUI tool-grounded task, fixture harbor_slips_v1).

Authoritative: marina_list_slips, marina_get_boat, marina_quote_stay (read), marina_reserve_slip and
marina_cancel_reservation (write), marina_list_reservations (read). Not authoritative: marina_slip_snapshot (a
stale printout of last season's board), marina_draft_reservation (looks like booking, persists nothing) and
marina_weather_advisory (informational only). Writes are idempotent so a replayed flow changes nothing twice.
Standard library only: the artifact server imports this module inside the sandbox.
"""

from __future__ import annotations

import copy
from typing import Any

_SLIPS = {
    "A-03": {"length_ft": 30, "power_amps": 30, "nightly_rate": 42, "status": "open"},
    "A-07": {"length_ft": 35, "power_amps": 50, "nightly_rate": 55, "status": "open"},
    "B-02": {"length_ft": 45, "power_amps": 50, "nightly_rate": 70, "status": "reserved"},
    "B-05": {"length_ft": 40, "power_amps": 30, "nightly_rate": 48, "status": "open"},
    "C-01": {"length_ft": 60, "power_amps": 100, "nightly_rate": 95, "status": "maintenance"},
}
_BOATS = {
    "HN-4471": {"name": "Blue Heron", "length_ft": 33, "power_amps": 50, "owner": "Ines Duarte"},
    "HN-5120": {"name": "Kittiwake", "length_ft": 28, "power_amps": 30, "owner": "Sam Pryor"},
    "HN-6003": {"name": "Storm Petrel", "length_ft": 44, "power_amps": 50, "owner": "Ola Lund"},
    "HN-7788": {"name": "Sea Lark", "length_ft": 42, "power_amps": 50, "owner": "Rui Costa"},
}
_RESERVATIONS = {
    "R-B-02-HN-7788": {"slip_id": "B-02", "registration": "HN-7788", "arrival": "2026-06-10", "nights": 5,
                       "total": 350, "status": "confirmed", "cancel_reason": ""},
}


def initial_state() -> dict[str, Any]:
    return {"slips": copy.deepcopy(_SLIPS), "boats": copy.deepcopy(_BOATS),
            "reservations": copy.deepcopy(_RESERVATIONS), "audit": []}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


_SLIP_ID = {"type": "string", "pattern": "^[A-C]-[0-9]{2}$"}
_REG = {"type": "string", "pattern": "^HN-[0-9]{4}$"}
_DATE = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
_NIGHTS = {"type": "integer", "minimum": 1, "maximum": 14}
_SLIP = {"type": "object", "properties": {
    "slip_id": {"type": "string"}, "length_ft": {"type": "integer"}, "power_amps": {"type": "integer"},
    "nightly_rate": {"type": "number"}, "status": {"type": "string", "enum": ["open", "reserved", "maintenance"]}},
    "required": ["slip_id", "length_ft", "power_amps", "nightly_rate", "status"]}
_RES = {"type": "object", "properties": {
    "reservation_id": {"type": "string"}, "slip_id": {"type": "string"}, "registration": {"type": "string"},
    "boat_name": {"type": "string"}, "arrival": {"type": "string"}, "nights": {"type": "integer"},
    "total": {"type": "number"}, "status": {"type": "string", "enum": ["confirmed", "cancelled"]}},
    "required": ["reservation_id", "slip_id", "registration", "boat_name", "arrival", "nights", "total", "status"]}

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "marina_list_slips": {
        "description": "Live slip board: every slip with length, shore power, nightly rate and current status.",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"slips": {"type": "array", "items": _SLIP}}, "required": ["slips"]},
    },
    "marina_slip_snapshot": {
        "description": "Cached copy of the printed slip board from the 2025 season (kept for reference).",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"slips": {"type": "array", "items": _SLIP}, "printed": {"type": "string"}},
                         "required": ["slips", "printed"]},
    },
    "marina_get_boat": {
        "description": "A visiting boat by registration: name, length overall, shore power needed, owner.",
        "inputSchema": _obj({"registration": _REG}, ["registration"]),
        "outputSchema": {"type": "object", "properties": {"found": {"type": "boolean"}, "boat": {"type": "object", "properties": {
            "registration": {"type": "string"}, "name": {"type": "string"}, "length_ft": {"type": "integer"},
            "power_amps": {"type": "integer"}, "owner": {"type": "string"}},
            "required": ["registration", "name", "length_ft", "power_amps", "owner"]}}, "required": ["found"]},
    },
    "marina_quote_stay": {
        "description": "Check a stay without booking: whether the boat fits the slip (reasons if not) and the price.",
        "inputSchema": _obj({"slip_id": _SLIP_ID, "registration": _REG, "nights": _NIGHTS}, ["slip_id", "registration", "nights"]),
        "outputSchema": {"type": "object", "properties": {
            "fits": {"type": "boolean"}, "reasons": {"type": "array", "items": {"type": "string"}},
            "nightly_rate": {"type": "number"}, "total": {"type": "number"}, "persisted": {"const": False}},
            "required": ["fits", "reasons", "persisted"]},
    },
    "marina_draft_reservation": {
        "description": "Prepare a reservation draft for the office printer. Drafts are not bookings and are not kept.",
        "inputSchema": _obj({"slip_id": _SLIP_ID, "registration": _REG, "arrival": _DATE, "nights": _NIGHTS},
                            ["slip_id", "registration", "arrival", "nights"]),
        "outputSchema": {"type": "object", "properties": {"draft_id": {"type": "string"}, "persisted": {"const": False}},
                         "required": ["draft_id", "persisted"]},
    },
    "marina_reserve_slip": {
        "description": "Book a slip for a boat from an arrival date for a number of nights. Fails if the boat does not fit or the slip is taken.",
        "inputSchema": _obj({"slip_id": _SLIP_ID, "registration": _REG, "arrival": _DATE, "nights": _NIGHTS},
                            ["slip_id", "registration", "arrival", "nights"]),
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}, "error": {"type": "string"}, "reservation": _RES},
                         "required": ["ok"]},
    },
    "marina_list_reservations": {
        "description": "The reservation book: every reservation with its status (confirmed or cancelled).",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"reservations": {"type": "array", "items": _RES}}, "required": ["reservations"]},
    },
    "marina_cancel_reservation": {
        "description": "Cancel a reservation with a reason; its slip becomes open again.",
        "inputSchema": _obj({"reservation_id": {"type": "string", "minLength": 1}, "reason": {"type": "string", "minLength": 1}},
                            ["reservation_id", "reason"]),
        "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}, "error": {"type": "string"}, "reservation": _RES},
                         "required": ["ok"]},
    },
    "marina_weather_advisory": {
        "description": "Harbour weather advisory text (informational; does not change slip availability).",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"advisory": {"type": "string"}}, "required": ["advisory"]},
    },
}


def _ensure(state: dict[str, Any]) -> None:
    if "slips" not in state:  # standalone use: seed the default harbour
        state.update(initial_state())


def _slip_view(slip_id: str, slip: dict[str, Any]) -> dict[str, Any]:
    return {"slip_id": slip_id, **slip}


def _res_view(state: dict[str, Any], reservation_id: str) -> dict[str, Any]:
    r = state["reservations"][reservation_id]
    return {"reservation_id": reservation_id, "slip_id": r["slip_id"], "registration": r["registration"],
            "boat_name": state["boats"][r["registration"]]["name"], "arrival": r["arrival"], "nights": r["nights"],
            "total": r["total"], "status": r["status"]}


def _fit(state: dict[str, Any], slip_id: str, registration: str) -> list[str]:
    slip, boat = state["slips"].get(slip_id), state["boats"].get(registration)
    if slip is None:
        return [f"unknown slip {slip_id}"]
    if boat is None:
        return [f"unknown boat {registration}"]
    held = state["reservations"].get(f"R-{slip_id}-{registration}")
    reasons = []
    if slip["status"] == "maintenance":
        reasons.append("slip is in maintenance")
    elif slip["status"] == "reserved" and not (held and held["status"] == "confirmed"):
        reasons.append("slip is reserved")
    if boat["length_ft"] > slip["length_ft"]:
        reasons.append(f"boat is {boat['length_ft']} ft, slip takes {slip['length_ft']} ft")
    if boat["power_amps"] > slip["power_amps"]:
        reasons.append(f"slip has {slip['power_amps']} A, boat needs {boat['power_amps']} A")
    return reasons


def invoke(tool: str, args: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    _ensure(state)
    if tool == "marina_list_slips":
        return {"slips": [_slip_view(k, v) for k, v in state["slips"].items()]}
    if tool == "marina_slip_snapshot":
        stale = copy.deepcopy(_SLIPS)
        stale["C-01"]["status"], stale["B-02"]["status"], stale["A-07"]["status"] = "open", "open", "reserved"
        return {"slips": [_slip_view(k, v) for k, v in stale.items()], "printed": "2025-09-30"}
    if tool == "marina_get_boat":
        boat = state["boats"].get(args["registration"])
        return {"found": True, "boat": {"registration": args["registration"], **boat}} if boat else {"found": False}
    if tool == "marina_quote_stay":
        reasons = _fit(state, args["slip_id"], args["registration"])
        result: dict[str, Any] = {"fits": not reasons, "reasons": reasons, "persisted": False}
        slip = state["slips"].get(args["slip_id"])
        if slip:
            result.update(nightly_rate=slip["nightly_rate"], total=slip["nightly_rate"] * args["nights"])
        return result
    if tool == "marina_draft_reservation":
        return {"draft_id": f"DRAFT-{args['slip_id']}-{args['registration']}", "persisted": False}
    if tool == "marina_reserve_slip":
        slip_id, reg = args["slip_id"], args["registration"]
        reasons = _fit(state, slip_id, reg)
        if reasons:
            return {"ok": False, "error": "; ".join(reasons)}
        rid = f"R-{slip_id}-{reg}"
        existing = state["reservations"].get(rid)
        if not (existing and existing["status"] == "confirmed"):
            total = state["slips"][slip_id]["nightly_rate"] * args["nights"]
            state["reservations"][rid] = {"slip_id": slip_id, "registration": reg, "arrival": args["arrival"],
                                          "nights": args["nights"], "total": total, "status": "confirmed", "cancel_reason": ""}
            state["slips"][slip_id]["status"] = "reserved"
            state["audit"].append(f"reserve {rid}")
        return {"ok": True, "reservation": _res_view(state, rid)}
    if tool == "marina_list_reservations":
        return {"reservations": [_res_view(state, r) for r in state["reservations"]]}
    if tool == "marina_cancel_reservation":
        rid = args["reservation_id"]
        if rid not in state["reservations"]:
            return {"ok": False, "error": f"no reservation {rid}"}
        reservation = state["reservations"][rid]
        if reservation["status"] == "confirmed":
            reservation["status"], reservation["cancel_reason"] = "cancelled", args["reason"]
            state["slips"][reservation["slip_id"]]["status"] = "open"
            state["audit"].append(f"cancel {rid}")
        return {"ok": True, "reservation": _res_view(state, rid)}
    if tool == "marina_weather_advisory":
        return {"advisory": "Small craft advisory until 18:00; gusts to 25 knots at the breakwater."}
    raise ValueError(f"unknown tool {tool!r}")
