"""One transaction attempt of a batch: what its records' effects write at the
end, once every record was applied (the Go API's Tx.Emit and Counter)."""

from __future__ import annotations

import json
from pathlib import Path

from .envelope import SPEC_VERSION, Envelope

_SQL = Path(__file__).parent / "sql"
INTENTS_SQL = (_SQL / "intents.sql").read_text()

# The topic intents go to, after the deployment's prefix; the deployment's
# endpoint and tenants' destinations read it.
NOTIFICATIONS = "notifications"


def intent_headers(env: Envelope, ce_type: str, key: str, object_type: str, subject: str) -> dict[str, str]:
    """An intent's outbox headers, as the Go runtime writes them
    (consumers.NewIntent): the intent's own id, type and resource key, the
    cause's tenant, source and trace; no body header beyond content-type."""
    partition_key = f"{env.tenant_id}/{object_type}/{subject}"
    h = {
        "ce_id": key,
        "ce_partitionkey": partition_key,
        "ce_source": f"/tenants/{env.tenant_id}/sources/{env.source_id}",
        "ce_sourceaccount": env.source_account,
        "ce_specversion": SPEC_VERSION,
        "ce_tenantid": env.tenant_id,
        "ce_type": ce_type,
        "content-type": "application/json",
    }
    if subject:
        h["ce_subject"] = subject
    if env.traceparent:
        h["traceparent"] = env.traceparent
    return h


class Batch:
    """Collects a batch's intents and net stock changes; settle writes them,
    intents in the order emitted, then stock rows in one order (SKU, then
    tenant), so concurrent batches never take those rows' locks in opposite
    orders, and hold them only from there to the commit."""

    def __init__(self, conn, prefix: str, stock_sql: str):
        self.conn = conn
        self.prefix = prefix
        self.stock_sql = stock_sql
        self.intents: list[tuple[str, bytes, str, bytes]] = []
        self.stock: dict[tuple[str, str], int] = {}  # (sku, tenant) -> net change

    def emit(self, env: Envelope, ce_type: str, key: str, object_type: str, subject: str, payload: dict) -> None:
        """An intent caused by env's effect, an outbox row of this
        transaction: it exists exactly when its effect does."""
        headers = intent_headers(env, ce_type, key, object_type, subject)
        self.intents.append((
            f"{self.prefix}.{NOTIFICATIONS}",
            headers["ce_partitionkey"].encode(),
            json.dumps(headers, sort_keys=True, separators=(",", ":")),
            json.dumps(payload, separators=(",", ":")).encode(),
        ))

    def add_stock(self, tenant: str, sku: str, delta: int) -> None:
        """Moves a stock row by delta, netted with the batch's other changes."""
        k = (sku, tenant)
        self.stock[k] = self.stock.get(k, 0) + delta

    def settle(self) -> None:
        if self.intents:
            topics, keys, headers, payloads = (list(c) for c in zip(*self.intents))
            self.conn.execute(INTENTS_SQL, [topics, keys, headers, payloads])
        if self.stock:
            rows = sorted(self.stock)  # code point order: Go's byte order of UTF-8
            self.conn.execute(self.stock_sql, [[r[0] for r in rows], [self.stock[r] for r in rows], [r[1] for r in rows]])
