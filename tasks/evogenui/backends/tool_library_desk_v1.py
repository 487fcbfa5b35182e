"""Backend of the Fernhill Tool Library loan desk (EvoGenUI tool-grounded task, fixture tool_library_desk_v1).

Authoritative tools read and write the runtime state; two helpers look similar but are not authoritative:
`lib_cached_catalog` is a stale nightly snapshot and `lib_member_directory_legacy` keeps pre-migration loan
limits. `lib_preview_checkout` looks like a checkout but never persists anything. Writes are idempotent
(repeating the same checkout or return returns the same record), so a replayed user flow is harmless.
Standard library only: the artifact server imports this module inside the sandbox.
"""

from __future__ import annotations

import copy
from typing import Any

TODAY = "2026-03-02"
DUE_DATE = "2026-03-16"  # loans run 14 days from TODAY

_ITEMS = {
    "TL-101": {"name": "Cordless drill", "category": "Power tools", "status": "available", "deposit": 20},
    "TL-102": {"name": "Tile saw", "category": "Power tools", "status": "on_loan", "deposit": 40},
    "TL-103": {"name": "Pressure washer", "category": "Outdoor", "status": "available", "deposit": 35},
    "TL-104": {"name": "Ladder 8 ft", "category": "Access", "status": "available", "deposit": 10},
    "TL-105": {"name": "Hedge trimmer", "category": "Outdoor", "status": "maintenance", "deposit": 15},
    "TL-106": {"name": "Wet/dry vacuum", "category": "Cleaning", "status": "on_loan", "deposit": 25},
}
_MEMBERS = {
    "M-207": {"name": "Priya Nair", "loan_limit": 2, "suspended": False},
    "M-311": {"name": "Tomas Berg", "loan_limit": 1, "suspended": False},
    "M-412": {"name": "June Okafor", "loan_limit": 2, "suspended": True},
    "M-519": {"name": "Dana Whitfield", "loan_limit": 3, "suspended": False},
}
_LOANS = {
    "LN-TL-102-M-207": {"item_id": "TL-102", "member_id": "M-207", "due_date": "2026-03-05", "status": "active"},
    "LN-TL-106-M-519": {"item_id": "TL-106", "member_id": "M-519", "due_date": "2026-03-09", "status": "active"},
}


def initial_state() -> dict[str, Any]:
    return {"items": copy.deepcopy(_ITEMS), "members": copy.deepcopy(_MEMBERS), "loans": copy.deepcopy(_LOANS),
            "returns": {}, "audit": []}


_ITEM_ID = {"type": "string", "pattern": "^TL-[0-9]{3}$"}
_MEMBER_ID = {"type": "string", "pattern": "^M-[0-9]{3}$"}
_STATUS = {"type": "string", "enum": ["available", "on_loan", "maintenance"]}
_ITEM = {
    "type": "object",
    "properties": {"item_id": {"type": "string"}, "name": {"type": "string"}, "category": {"type": "string"},
                   "status": _STATUS, "deposit": {"type": "number"}},
    "required": ["item_id", "name", "category", "status", "deposit"],
}
_LOAN = {
    "type": "object",
    "properties": {"loan_id": {"type": "string"}, "item_id": {"type": "string"}, "item_name": {"type": "string"},
                   "member_id": {"type": "string"}, "member_name": {"type": "string"}, "due_date": {"type": "string"}},
    "required": ["loan_id", "item_id", "item_name", "member_id", "member_name", "due_date"],
}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


_WRITE_RESULT = {"ok": {"type": "boolean"}, "error": {"type": "string"}}

TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "lib_list_items": {
        "description": "Live catalog: every item with its current status (available, on_loan, maintenance) and deposit. Optional category filter.",
        "inputSchema": _obj({"category": {"type": "string"}}),
        "outputSchema": {"type": "object", "properties": {"items": {"type": "array", "items": _ITEM}, "as_of": {"type": "string"}},
                         "required": ["items", "as_of"]},
    },
    "lib_cached_catalog": {
        "description": "Deprecated: the nightly catalog snapshot kept for the old self-service kiosk. Not refreshed during the day.",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"items": {"type": "array", "items": _ITEM}, "snapshot_date": {"type": "string"}},
                         "required": ["items", "snapshot_date"]},
    },
    "lib_get_member": {
        "description": "A member's record: name, loan limit, suspension flag and current active loans.",
        "inputSchema": _obj({"member_id": _MEMBER_ID}, ["member_id"]),
        "outputSchema": {"type": "object", "properties": {
            "found": {"type": "boolean"},
            "member": {"type": "object", "properties": {
                "member_id": {"type": "string"}, "name": {"type": "string"}, "loan_limit": {"type": "integer"},
                "suspended": {"type": "boolean"}, "active_loans": {"type": "array", "items": _LOAN}},
                "required": ["member_id", "name", "loan_limit", "suspended", "active_loans"]}},
            "required": ["found"]},
    },
    "lib_member_directory_legacy": {
        "description": "Legacy member directory search by name, from before the 2024 migration (loan limits are not maintained).",
        "inputSchema": _obj({"name_query": {"type": "string"}}, ["name_query"]),
        "outputSchema": {"type": "object", "properties": {"matches": {"type": "array", "items": {"type": "object"}}}, "required": ["matches"]},
    },
    "lib_preview_checkout": {
        "description": "Dry run of a checkout: eligibility, reasons, deposit and due date. Records nothing.",
        "inputSchema": _obj({"item_id": _ITEM_ID, "member_id": _MEMBER_ID}, ["item_id", "member_id"]),
        "outputSchema": {"type": "object", "properties": {
            "eligible": {"type": "boolean"}, "reasons": {"type": "array", "items": {"type": "string"}},
            "deposit": {"type": "number"}, "due_date": {"type": "string"}, "persisted": {"const": False}},
            "required": ["eligible", "reasons", "persisted"]},
    },
    "lib_checkout_item": {
        "description": "Record a loan of an item to a member (due in 14 days). Fails when the item or member is not eligible.",
        "inputSchema": _obj({"item_id": _ITEM_ID, "member_id": _MEMBER_ID}, ["item_id", "member_id"]),
        "outputSchema": {"type": "object", "properties": {**_WRITE_RESULT, "loan": _LOAN}, "required": ["ok"]},
    },
    "lib_list_loans": {
        "description": "The loan ledger: every active loan, optionally for one member.",
        "inputSchema": _obj({"member_id": _MEMBER_ID}),
        "outputSchema": {"type": "object", "properties": {"loans": {"type": "array", "items": _LOAN}}, "required": ["loans"]},
    },
    "lib_return_item": {
        "description": "Record the return of an item on loan. condition 'damaged' sends the item to maintenance, 'good' makes it available.",
        "inputSchema": _obj({"item_id": _ITEM_ID, "condition": {"type": "string", "enum": ["good", "damaged"]}}, ["item_id", "condition"]),
        "outputSchema": {"type": "object", "properties": {**_WRITE_RESULT, "receipt": {"type": "object", "properties": {
            "receipt_id": {"type": "string"}, "item_id": {"type": "string"}, "condition": {"type": "string"}, "new_status": _STATUS},
            "required": ["receipt_id", "item_id", "condition", "new_status"]}}, "required": ["ok"]},
    },
    "lib_get_audit_log": {
        "description": "Every recorded checkout and return, oldest first.",
        "inputSchema": _obj({}),
        "outputSchema": {"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "object", "properties": {
            "seq": {"type": "integer"}, "action": {"type": "string"}, "item_id": {"type": "string"}, "detail": {"type": "string"}},
            "required": ["seq", "action", "item_id", "detail"]}}}, "required": ["entries"]},
    },
}


def _ensure(state: dict[str, Any]) -> None:
    # The runner normally seeds initial_state(); an empty state is seeded here so the module stands alone.
    if "items" not in state:
        state.update(initial_state())


def _item_view(state: dict[str, Any], item_id: str) -> dict[str, Any]:
    return {"item_id": item_id, **{k: state["items"][item_id][k] for k in ("name", "category", "status", "deposit")}}


def _loan_view(state: dict[str, Any], loan_id: str) -> dict[str, Any]:
    loan = state["loans"][loan_id]
    return {"loan_id": loan_id, "item_id": loan["item_id"], "item_name": state["items"][loan["item_id"]]["name"],
            "member_id": loan["member_id"], "member_name": state["members"][loan["member_id"]]["name"], "due_date": loan["due_date"]}


def _active(state: dict[str, Any], member_id: str | None = None) -> list[str]:
    return [lid for lid, loan in state["loans"].items()
            if loan["status"] == "active" and (member_id is None or loan["member_id"] == member_id)]


def _eligibility(state: dict[str, Any], item_id: str, member_id: str) -> list[str]:
    """Reasons a checkout is refused (empty: allowed). A loan the member already holds is allowed (idempotent)."""
    reasons = []
    item, member = state["items"].get(item_id), state["members"].get(member_id)
    if item is None:
        reasons.append(f"unknown item {item_id}")
    if member is None:
        reasons.append(f"unknown member {member_id}")
    if reasons:
        return reasons
    if f"LN-{item_id}-{member_id}" in _active(state, member_id):
        return []
    if member["suspended"]:
        reasons.append("member is suspended")
    if item["status"] == "maintenance":
        reasons.append("item is in maintenance")
    elif item["status"] == "on_loan":
        reasons.append("item is on loan to another member")
    held = len(_active(state, member_id))
    if held >= member["loan_limit"]:
        reasons.append(f"loan limit reached ({held} of {member['loan_limit']})")
    return reasons


def _audit(state: dict[str, Any], action: str, item_id: str, detail: str) -> None:
    state["audit"].append({"seq": len(state["audit"]) + 1, "action": action, "item_id": item_id, "detail": detail})


def invoke(tool: str, args: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    _ensure(state)
    if tool == "lib_list_items":
        ids = [i for i in state["items"] if not args.get("category") or state["items"][i]["category"] == args["category"]]
        return {"items": [_item_view(state, i) for i in ids], "as_of": TODAY}
    if tool == "lib_cached_catalog":
        stale = copy.deepcopy(_ITEMS)
        stale["TL-103"]["status"] = "on_loan"  # last night's snapshot: out of date
        stale["TL-105"]["status"] = "available"
        return {"items": [{"item_id": i, **v} for i, v in stale.items()], "snapshot_date": "2026-02-27"}
    if tool == "lib_get_member":
        member = state["members"].get(args["member_id"])
        if member is None:
            return {"found": False}
        return {"found": True, "member": {"member_id": args["member_id"], **member,
                                          "active_loans": [_loan_view(state, l) for l in _active(state, args["member_id"])]}}
    if tool == "lib_member_directory_legacy":
        query = args["name_query"].lower()
        return {"matches": [{"member_id": m, "name": v["name"], "loan_limit": 3} for m, v in _MEMBERS.items() if query in v["name"].lower()]}
    if tool == "lib_preview_checkout":
        reasons = _eligibility(state, args["item_id"], args["member_id"])
        item = state["items"].get(args["item_id"])
        result: dict[str, Any] = {"eligible": not reasons, "reasons": reasons, "persisted": False}
        if item is not None:
            result.update(deposit=item["deposit"], due_date=DUE_DATE)
        return result
    if tool == "lib_checkout_item":
        item_id, member_id = args["item_id"], args["member_id"]
        reasons = _eligibility(state, item_id, member_id)
        if reasons:
            return {"ok": False, "error": "; ".join(reasons)}
        loan_id = f"LN-{item_id}-{member_id}"
        if loan_id not in _active(state, member_id):
            state["loans"][loan_id] = {"item_id": item_id, "member_id": member_id, "due_date": DUE_DATE, "status": "active"}
            state["items"][item_id]["status"] = "on_loan"
            _audit(state, "checkout", item_id, f"checkout {item_id} to {member_id} ({loan_id})")
        return {"ok": True, "loan": _loan_view(state, loan_id)}
    if tool == "lib_list_loans":
        return {"loans": [_loan_view(state, l) for l in _active(state, args.get("member_id"))]}
    if tool == "lib_return_item":
        item_id, condition = args["item_id"], args["condition"]
        active = [l for l in _active(state) if state["loans"][l]["item_id"] == item_id]
        previous = state["returns"].get(item_id)
        if not active:
            if previous and previous["condition"] == condition:
                return {"ok": True, "receipt": previous}  # the same return again: same receipt
            return {"ok": False, "error": f"{item_id} is not on loan"}
        for loan_id in active:
            state["loans"][loan_id]["status"] = "returned"
        new_status = "maintenance" if condition == "damaged" else "available"
        state["items"][item_id]["status"] = new_status
        receipt = {"receipt_id": f"RT-{item_id}-{len(state['audit']) + 1}", "item_id": item_id, "condition": condition,
                   "new_status": new_status}
        state["returns"][item_id] = receipt
        _audit(state, "return", item_id, f"return {item_id} ({condition})")
        return {"ok": True, "receipt": receipt}
    if tool == "lib_get_audit_log":
        return {"entries": copy.deepcopy(state["audit"])}
    raise ValueError(f"unknown tool {tool!r}")
