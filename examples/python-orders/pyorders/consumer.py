"""A Kafka consumer group that applies Sluice's records exactly once in Postgres:
what docs/any-language.md asks of a consumer in any language.

- A batch of records (up to max_batch, from the partitions this member owns)
  is applied in one Postgres transaction, effects and their business keys
  together; its offsets are committed to Kafka only after that transaction
  committed. A crash between the two applies the batch again, which the
  effects' business keys and version guards make change nothing.
- Each transaction sets lock_timeout: a row locked elsewhere fails it
  quickly, and the batch is retried in place (its partitions wait, their
  order kept) rather than holding locks for long.
- A record that fails for good (bad data: Permanent, a Postgres error
  blaming the data, or a bug in the effect's code) is tried max_attempts
  times (default 3) with backoff, then written to the poison table in the
  batch's transaction, and the partition flows on. Anything else is
  transient: the batch is retried with exponential backoff and jitter
  (100 ms doubling to 5 s), without giving up and without skipping.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import signal
import time
from datetime import datetime, timezone
from pathlib import Path

import psycopg
from confluent_kafka import Consumer as KafkaConsumer
from confluent_kafka import KafkaException, TopicPartition

from . import envelope, orders
from .batch import Batch
from .envelope import Permanent

log = logging.getLogger("pyorders")

_SQL = Path(__file__).parent / "sql"
SCHEMA_SQL = (_SQL / "schema.sql").read_text()
DEAD_LETTER_SQL = (_SQL / "dead_letter.sql").read_text()

# SQLSTATE classes that blame the data, as Sluice's Go runtime decides
# (internal/pg.Classify): data exception, integrity constraint violation,
# program limit exceeded, cardinality violation, triggered data change
# violation, with check option violation. Every other error is transient.
DATA_CLASSES = {"22", "23", "54", "21", "27", "44"}


@dataclasses.dataclass
class Config:
    """The consumer's settings, from its environment (from_env)."""

    database_url: str
    brokers: str
    prefix: str = "sluice"
    topic: str = ""  # default <prefix>.orders
    group: str = ""  # default <prefix>.python-orders
    max_batch: int = 500
    max_attempts: int = 3
    lock_timeout_ms: int = 200
    backoff: float = 0.1
    max_backoff: float = 5.0
    # Hooks for the kit's driver (effecttest.ProcessRun): exit hard after
    # the first transaction committed, before its offsets; fail the first
    # transactions transiently; a line per transaction attempt.
    crash_after_commit: bool = False
    fail_first: int = 0
    attempts_file: str = ""

    @classmethod
    def from_env(cls, env=os.environ) -> Config:
        missing = [k for k in ("SLUICE_DATABASE_URL", "SLUICE_KAFKA_BROKERS") if not env.get(k)]
        if missing:
            raise SystemExit(f"pyorders: {' and '.join(missing)} must be set")
        c = cls(database_url=env["SLUICE_DATABASE_URL"], brokers=env["SLUICE_KAFKA_BROKERS"],
                prefix=env.get("SLUICE_TOPIC_PREFIX") or "sluice",
                max_batch=int(env.get("ORDERS_MAX_BATCH") or 0) or 500,
                max_attempts=int(env.get("ORDERS_MAX_ATTEMPTS") or 0) or 3,
                lock_timeout_ms=int(env.get("ORDERS_LOCK_TIMEOUT_MS") or 0) or 200,
                crash_after_commit=env.get("ORDERS_CRASH_AFTER_COMMIT") == "1",
                fail_first=int(env.get("ORDERS_FAIL_FIRST") or 0),
                attempts_file=env.get("ORDERS_ATTEMPTS_FILE", ""))
        c.topic = env.get("ORDERS_TOPIC") or f"{c.prefix}.orders"
        c.group = env.get("ORDERS_GROUP") or f"{c.prefix}.python-orders"
        return c


class RecordFailed(Exception):
    """The failure of records[index] of a batch."""

    def __init__(self, index: int, cause: BaseException):
        super().__init__(str(cause))
        self.index, self.cause = index, cause


class InjectedFailure(Exception):
    """The kit's transient failure (Config.fail_first): a dependency down."""


@dataclasses.dataclass
class Failure:
    """A record's failures for good so far."""

    attempts: int
    first: datetime
    last: datetime
    reason: str
    event_id: str = ""
    event_type: str = ""


def permanent(exc: BaseException) -> bool:
    """Whether a record's failure is its data's, for good."""
    if isinstance(exc, Permanent):
        return True
    if isinstance(exc, psycopg.Error):
        return (exc.sqlstate or "")[:2] in DATA_CLASSES
    # A bug in the effect's code: the record's fault, as a Go handler's
    # panic is, so it dead-letters rather than stopping its partition.
    return True


def _position(m) -> tuple[str, int, int]:
    return m.topic(), m.partition(), m.offset()


class Consumer:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.fail_first = cfg.fail_first
        self.stopping = False
        self.conn: psycopg.Connection | None = None
        self.failures: dict[tuple[str, int, int], Failure] = {}
        # Offsets of batches committed in Postgres whose commit to Kafka
        # failed (a rebalance in progress): committed later, or given up
        # with their partition (its next owner applies them again).
        self.pending: dict[tuple[str, int], int] = {}
        self.kafka = KafkaConsumer({
            "bootstrap.servers": cfg.brokers,
            "group.id": cfg.group,
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
            # A member killed without leaving holds its partitions this
            # long (librdkafka's 45 s default is a long outage).
            "session.timeout.ms": 6000,
            "heartbeat.interval.ms": 1000,
        })

    def stop(self, *_):
        self.stopping = True

    def run(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        self.connect()
        with self.conn.transaction():
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext('python_orders_dead_letters'))")
            self.conn.execute(SCHEMA_SQL)
        self.kafka.subscribe([self.cfg.topic], on_revoke=self.revoked)
        log.info("consuming topic=%s group=%s", self.cfg.topic, self.cfg.group)
        try:
            while not self.stopping:
                msgs = self.kafka.consume(num_messages=self.cfg.max_batch, timeout=0.5)
                records = [m for m in msgs if not self.fetch_error(m)]
                if records and not self.apply(records):
                    break  # stopped while retrying: the batch is the next owner's
                if records and self.cfg.crash_after_commit:
                    log.warning("crash hook: exiting between the effects' commit and the offsets'")
                    os._exit(70)
                self.mark(records)
                self.commit_pending()
        finally:
            self.kafka.close()  # leaves the group: its partitions move at once
            self.conn.close()

    def connect(self) -> None:
        self.conn = psycopg.connect(self.cfg.database_url, autocommit=True, application_name=self.cfg.group,
                                    cursor_factory=psycopg.RawCursor)

    @staticmethod
    def fetch_error(m) -> bool:
        if m.error() is None:
            return False
        if m.error().fatal():
            raise KafkaException(m.error())
        log.warning("kafka: %s", m.error())
        return True

    def apply(self, records) -> bool:
        """Applies records until their transaction commits; False when asked
        to stop first."""
        attempt = 0
        while True:
            attempt += 1
            try:
                if self.conn.closed or self.conn.broken:
                    self.connect()
                dead = self.transaction(records)
            except RecordFailed as f:
                delay = self.failed(records[f.index], f.cause, attempt)
                self.report(False, f.cause)
            except Exception as e:  # the batch's, not a record's: transient
                log.warning("batch failed, retrying error=%r", e)
                delay = self.backoff(attempt)
                self.report(False, e)
            else:
                self.report(True)
                for m, f in dead:
                    log.error("dead-lettered event_id=%s type=%s topic=%s partition=%d offset=%d attempts=%d reason=%s",
                              f.event_id, f.event_type, *_position(m), f.attempts, f.reason)
                for m in records:
                    self.failures.pop(_position(m), None)
                return True
            if not self.sleep(delay):
                return False

    def transaction(self, records) -> list:
        """Applies records in one transaction; returns those it dead-lettered."""
        dead = []
        with self.conn.transaction():
            self.conn.execute(f"SET LOCAL lock_timeout = '{self.cfg.lock_timeout_ms}ms'")
            batch = Batch(self.conn, self.cfg.prefix, orders.STOCK_SQL)
            for i, m in enumerate(records):
                f = self.failures.get(_position(m))
                if f and f.attempts >= self.cfg.max_attempts:
                    self.dead_letter(m, f)
                    dead.append((m, f))
                    continue
                try:
                    env = envelope.parse(m.headers())
                    if orders.takes(env.type):
                        orders.apply(self.conn, batch, env, envelope.body(self.conn, env, m.value()))
                except Exception as e:
                    raise RecordFailed(i, e) from e
            if self.fail_first > 0:
                self.fail_first -= 1
                raise InjectedFailure("injected by the kit: a dependency down")
            batch.settle()
        return dead

    def failed(self, m, cause: BaseException, attempt: int) -> float:
        """Counts a record's failure; returns the pause before the next attempt."""
        if not permanent(cause):
            log.warning("record failed, retrying topic=%s partition=%d offset=%d error=%r", *_position(m), cause)
            return self.backoff(attempt)
        now = datetime.now(timezone.utc)
        f = self.failures.setdefault(_position(m), Failure(0, now, now, ""))
        f.attempts, f.last, f.reason = f.attempts + 1, now, str(cause)
        log.warning("record failed for good topic=%s partition=%d offset=%d attempts=%d reason=%s",
                    *_position(m), f.attempts, f.reason)
        return 0 if f.attempts >= self.cfg.max_attempts else self.backoff(f.attempts)

    def dead_letter(self, m, f: Failure) -> None:
        """Keeps a record out of attempts in the poison table, in the batch's
        transaction."""
        headers = {k: (v or b"").decode(errors="replace") for k, v in (m.headers() or [])}
        f.event_id, f.event_type = headers.get("ce_id", ""), headers.get("ce_type", "")
        self.conn.execute(DEAD_LETTER_SQL, [self.cfg.group, m.topic(), m.partition(), m.offset(), m.key(),
                                            json.dumps(headers), m.value(), f.reason, f.attempts, f.first, f.last])

    def backoff(self, attempt: int) -> float:
        d = min(self.cfg.max_backoff, self.cfg.backoff * 2 ** (attempt - 1))
        return d / 2 + random.uniform(0, d / 2)

    def sleep(self, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < end:
            time.sleep(min(0.05, max(0.0, end - time.monotonic())))
        return not self.stopping

    def report(self, committed: bool, err: BaseException | None = None) -> None:
        """A line per transaction attempt for the kit (Config.attempts_file)."""
        if not self.cfg.attempts_file:
            return
        line = {"committed": committed}
        if err is not None:
            line["sqlstate"] = getattr(err, "sqlstate", None) or ""
            line["error"] = str(err)
        with open(self.cfg.attempts_file, "a") as f:
            f.write(json.dumps(line) + "\n")

    def mark(self, records) -> None:
        """Marks the batch's offsets, applied, for the commit to Kafka."""
        for m in records:
            tp = (m.topic(), m.partition())
            self.pending[tp] = max(self.pending.get(tp, -1), m.offset() + 1)

    def commit_pending(self, only=None) -> None:
        if not self.pending:
            return
        offsets = [TopicPartition(t, p, o) for (t, p), o in self.pending.items() if only is None or (t, p) in only]
        if not offsets:
            return
        try:
            self.kafka.commit(offsets=offsets, asynchronous=False)
        except KafkaException as e:
            # Applied but not committed: retried after the next poll; a
            # partition given up meanwhile is applied again by its next
            # owner, which changes nothing.
            log.warning("offsets not committed yet error=%s", e)
            return
        for o in offsets:
            self.pending.pop((o.topic, o.partition), None)

    def revoked(self, _consumer, partitions) -> None:
        """Commits what was applied of the partitions given up, then forgets
        them."""
        gone = {(p.topic, p.partition) for p in partitions}
        self.commit_pending(only=gone)
        for tp in gone:
            self.pending.pop(tp, None)
