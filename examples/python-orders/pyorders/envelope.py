"""Sluice's Kafka record format, read from Python (docs/any-language.md).

A record is a CloudEvents event in the Kafka binding's binary mode: the value
is the body exactly as its sender signed it, the key the resource key, and
everything about the event travels in headers (ce_* and Sluice's own). A body
above 256 KiB travels by claim: no value, a sluice_claim header, and the body
read from the inbox row, in the transaction that applies it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

SPEC_VERSION = "1.0"

# The Go runtime's statement (internal/consumers/sql/claim.sql), copied:
# always one row, (kept, erased, body, before_keys).
CLAIM_SQL = (Path(__file__).parent / "sql" / "claim.sql").read_text()


class Permanent(Exception):
    """A failure no retry can fix (bad data): after the consumer's attempts
    its record is dead-lettered, and its partition flows on."""


@dataclasses.dataclass(frozen=True)
class Envelope:
    """What Sluice knows of an event beside its body."""

    id: str  # ce_id: the provider's event id; never an effect's key
    type: str  # ce_type: {kind}.{provider type}, e.g. hmac.order.placed
    subject: str  # ce_subject: the object's id
    time: str  # ce_time: RFC 3339, "" when the provider gave none
    tenant_id: str  # ce_tenantid
    source_id: str  # from ce_source, /tenants/{tenant}/sources/{source}
    source_account: str  # ce_sourceaccount
    partition_key: str  # ce_partitionkey: the Kafka key, tenant/type/id
    inbox_id: int  # sluice_inboxid: the order Sluice accepted events in; 0 if absent
    claim: str  # sluice_claim: set when the body is in the inbox row
    traceparent: str  # W3C traceparent, "" if absent

    def business_key(self, object_id: str, operation: str) -> str:
        """The identity of one operation on an object, as the Go API's
        Record.BusinessKey: every event asking for it names the same key."""
        return f"{self.source_id}/{self.source_account}/{object_id}/{operation}"


def parse(headers: list[tuple[str, bytes | None]] | None) -> Envelope:
    """Reads a record's headers; a header sent twice keeps its last value."""
    h: dict[str, str] = {}
    for key, value in headers or []:
        h[key] = value.decode() if value is not None else ""
    if h.get("ce_specversion") != SPEC_VERSION:
        raise Permanent(f"ce_specversion = {h.get('ce_specversion')!r}, want {SPEC_VERSION!r}")
    if not (h.get("ce_id") and h.get("ce_type") and h.get("ce_tenantid")):
        raise Permanent("missing ce_id, ce_type or ce_tenantid")
    source_id = ""
    source = h.get("ce_source", "")
    if source.startswith("/tenants/") and "/sources/" in source:
        source_id = source.split("/sources/", 1)[1]
    inbox = h.get("sluice_inboxid", "")
    return Envelope(
        id=h["ce_id"],
        type=h["ce_type"],
        subject=h.get("ce_subject", ""),
        time=h.get("ce_time", ""),
        tenant_id=h["ce_tenantid"],
        source_id=source_id,
        source_account=h.get("ce_sourceaccount", ""),
        partition_key=h.get("ce_partitionkey", ""),
        inbox_id=int(inbox) if inbox.isdigit() else 0,
        claim=h.get("sluice_claim", ""),
        traceparent=h.get("traceparent", ""),
    )


def body(conn, env: Envelope, value: bytes | None) -> bytes:
    """The verified body: the record's value, or for a claim the inbox row
    it names, of the record's own tenant only, read in the batch's
    transaction (conn). A body gone (past its horizon, erased) or a row that
    is not the tenant's is permanent: a retry reads the same absence."""
    if not env.claim:
        return value or b""
    if not env.inbox_id:
        raise Permanent(f"claim {env.claim!r} without an inbox id")
    kept, erased, data, before_keys = conn.execute(CLAIM_SQL, [env.inbox_id, env.tenant_id]).fetchone()
    if data is not None:
        return bytes(data)
    if erased:
        raise Permanent(f"inbox row {env.inbox_id}: payload expired (erased on request)")
    if kept:
        raise Permanent(f"inbox row {env.inbox_id}: payload expired (past the payload horizon)")
    if before_keys:
        raise Permanent(f"inbox row {env.inbox_id}: payload expired (past the key horizon)")
    raise Permanent(f"claimed inbox row {env.inbox_id} of tenant {env.tenant_id} not found")
