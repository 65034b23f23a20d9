"""The orders effect of examples/orders, in Python, on the same tables and with
the same statements (the Go example's sql/ files, read as they are):

- stock reserved once per order line (business key: the order, the line,
  "reserve") and released once on cancellation ("release"); a release that
  arrives first stops the reservation; stock rows move at the end of the
  batch, in SKU order (Batch.settle);
- the order's projection keeps the greatest (cancelled, version, inbox id);
- each placed order is confirmed once, by an intent (an outbox row).
"""

from __future__ import annotations

import json
from pathlib import Path

from .batch import Batch
from .envelope import Envelope, Permanent

# The Go example's statements: one effect, two languages.
_SQL = Path(__file__).resolve().parents[2] / "orders" / "sql"


def _sql(name: str) -> str:
    return (_SQL / name).read_text()


PROJECT_SQL = _sql("project.sql")
LINE_SQL = _sql("line.sql")
SAME_LINE_SQL = _sql("same_line.sql")
EXISTS_SQL = _sql("exists.sql")
STOCK_SQL = _sql("stock.sql")

TYPE_PREFIX = "hmac.order."  # the group takes hmac.order.*
OTHER = {"reserve": "release", "release": "reserve"}


def takes(ce_type: str) -> bool:
    return ce_type.startswith(TYPE_PREFIX)


def _field(obj: dict, name: str, kind: type, default):
    """A field of the body as Go's decoder reads it into a typed struct: absent
    or null is the zero value; a value of another type is permanent."""
    v = obj.get(name)
    if v is None:
        return default
    if not isinstance(v, kind) or isinstance(v, bool) and kind is int:
        raise Permanent(f"{name}: {v!r} is not {kind.__name__}")
    return v


def decode(raw: bytes) -> dict:
    """The order of an event's body, its fields checked like Go's Body type."""
    try:
        body = json.loads(raw)
    except ValueError as e:
        raise Permanent(f"body: {e}") from e
    if not isinstance(body, dict):
        raise Permanent("body: not a JSON object")
    o = _field(body, "order", dict, {})
    lines = []
    for line in _field(o, "lines", list, []):
        if not isinstance(line, dict):
            raise Permanent(f"order line {line!r} is not an object")
        lines.append({"id": _field(line, "id", str, ""), "sku": _field(line, "sku", str, ""),
                      "quantity": _field(line, "quantity", int, 0)})
    return {"id": _field(o, "id", str, ""), "version": _field(o, "version", int, 0),
            "total": _field(o, "total", int, 0), "lines": lines}


def apply(conn, batch: Batch, env: Envelope, raw: bytes) -> None:
    """Applies one order event in the batch's transaction (conn)."""
    o = decode(raw)
    status = env.type.removeprefix(TYPE_PREFIX)
    if not o["id"]:
        raise Permanent(f"{env.type}: no order id")
    conn.execute(PROJECT_SQL, [env.tenant_id, o["id"], status, o["total"], o["version"], env.inbox_id, env.id])
    if status == "placed":
        for line in o["lines"]:
            _line(conn, batch, env, o, line, "reserve", -line["quantity"])
        _confirm(conn, batch, env, o)
    elif status == "cancelled":
        for line in o["lines"]:
            _line(conn, batch, env, o, line, "release", line["quantity"])


def _line(conn, batch: Batch, env: Envelope, o: dict, line: dict, op: str, delta: int) -> None:
    """An operation on an order line, once: its record, and its stock change.
    A reservation whose line was released before does nothing; a release of
    a line never reserved records itself, so a later reservation does
    nothing either."""
    obj = f"{o['id']}/{line['id']}"
    key = env.business_key(obj, op)
    other_done = conn.execute(EXISTS_SQL, [env.business_key(obj, OTHER[op])]).fetchone()[0]
    made = conn.execute(LINE_SQL, [key, env.tenant_id, o["id"], line["id"], line["sku"], line["quantity"], op, env.id]).rowcount
    if made == 0:
        (same,) = conn.execute(SAME_LINE_SQL, [key, line["sku"], line["quantity"]]).fetchone()
        if not same:
            # A different operation under a taken key: not applied, and
            # not silence either.
            raise Permanent(f"business key {key} taken with other content")
        return
    if op == "reserve" and other_done or op == "release" and not other_done:
        return
    batch.add_stock(env.tenant_id, line["sku"], delta)


def _confirm(conn, batch: Batch, env: Envelope, o: dict) -> None:
    """The order's confirmation, once."""
    key = env.business_key(o["id"], "confirm")
    made = conn.execute(LINE_SQL, [key, env.tenant_id, o["id"], "", "", 0, "confirm", env.id]).rowcount
    if made:
        batch.emit(env, "orders.confirmed", key, "order", o["id"], {"order_id": o["id"], "total": o["total"]})
