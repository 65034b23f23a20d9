from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.reconcile_run_outcome import ReconcileRunOutcome
from ..models.reconcile_run_phase import ReconcileRunPhase
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="ReconcileRun")



@_attrs_define
class ReconcileRun:
    """ 
        Attributes:
            automatic (bool): The source's automatic window (the schedule's, or a run given no since and no until).
            corrected (int): Events recovered or conflicting, redeliveries asked for.
            dry_run (bool):
            finished_at (datetime.datetime | None):
            found (int): What the provider listed: events, failed deliveries, fetched objects.
            id (int): Run id.
            kind (str):
            outcome (ReconcileRunOutcome): How the run ended: ok (read to its end), partial (read to its end, an optional
                lookup refused for want of missing_permission), budget (the source's hourly API budget ran out), incomplete (the
                run's time or fetch limit), interrupted (the process was stopping), failed (an error, in the run's row), refused
                (it never began), running, abandoned (its process died).
            pages (int):
            phase (ReconcileRunPhase): Where the run stood when it last saved: events, redeliver or fetch; empty: it never
                began.
            reached (datetime.datetime | None): How far back in the window its listing came.
            requests (int):
            since (datetime.datetime | None): The window's start; null: a refused run given none.
            source_id (UUID):
            started_at (datetime.datetime):
            until (datetime.datetime | None): The window's end (never after the run began).
            error (str | Unset): Why a failed or refused run stopped.
            missing_permission (str | Unset): The permission an optional lookup lacked (the run is partial).
            note (str | Unset):
     """

    automatic: bool
    corrected: int
    dry_run: bool
    finished_at: datetime.datetime | None
    found: int
    id: int
    kind: str
    outcome: ReconcileRunOutcome
    pages: int
    phase: ReconcileRunPhase
    reached: datetime.datetime | None
    requests: int
    since: datetime.datetime | None
    source_id: UUID
    started_at: datetime.datetime
    until: datetime.datetime | None
    error: str | Unset = UNSET
    missing_permission: str | Unset = UNSET
    note: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        automatic = self.automatic

        corrected = self.corrected

        dry_run = self.dry_run

        finished_at: None | str
        if isinstance(self.finished_at, datetime.datetime):
            finished_at = self.finished_at.isoformat()
        else:
            finished_at = self.finished_at

        found = self.found

        id = self.id

        kind = self.kind

        outcome = self.outcome.value

        pages = self.pages

        phase = self.phase.value

        reached: None | str
        if isinstance(self.reached, datetime.datetime):
            reached = self.reached.isoformat()
        else:
            reached = self.reached

        requests = self.requests

        since: None | str
        if isinstance(self.since, datetime.datetime):
            since = self.since.isoformat()
        else:
            since = self.since

        source_id = str(self.source_id)

        started_at = self.started_at.isoformat()

        until: None | str
        if isinstance(self.until, datetime.datetime):
            until = self.until.isoformat()
        else:
            until = self.until

        error = self.error

        missing_permission = self.missing_permission

        note = self.note


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "automatic": automatic,
            "corrected": corrected,
            "dry_run": dry_run,
            "finished_at": finished_at,
            "found": found,
            "id": id,
            "kind": kind,
            "outcome": outcome,
            "pages": pages,
            "phase": phase,
            "reached": reached,
            "requests": requests,
            "since": since,
            "source_id": source_id,
            "started_at": started_at,
            "until": until,
        })
        if error is not UNSET:
            field_dict["error"] = error
        if missing_permission is not UNSET:
            field_dict["missing_permission"] = missing_permission
        if note is not UNSET:
            field_dict["note"] = note

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        automatic = d.pop("automatic")

        corrected = d.pop("corrected")

        dry_run = d.pop("dry_run")

        def _parse_finished_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                finished_at_type_0 = datetime.datetime.fromisoformat(data)



                return finished_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        finished_at = _parse_finished_at(d.pop("finished_at"))


        found = d.pop("found")

        id = d.pop("id")

        kind = d.pop("kind")

        outcome = ReconcileRunOutcome(d.pop("outcome"))




        pages = d.pop("pages")

        phase = ReconcileRunPhase(d.pop("phase"))




        def _parse_reached(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                reached_type_0 = datetime.datetime.fromisoformat(data)



                return reached_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        reached = _parse_reached(d.pop("reached"))


        requests = d.pop("requests")

        def _parse_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                since_type_0 = datetime.datetime.fromisoformat(data)



                return since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        since = _parse_since(d.pop("since"))


        source_id = UUID(d.pop("source_id"))




        started_at = datetime.datetime.fromisoformat(d.pop("started_at"))




        def _parse_until(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                until_type_0 = datetime.datetime.fromisoformat(data)



                return until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        until = _parse_until(d.pop("until"))


        error = d.pop("error", UNSET)

        missing_permission = d.pop("missing_permission", UNSET)

        note = d.pop("note", UNSET)

        reconcile_run = cls(
            automatic=automatic,
            corrected=corrected,
            dry_run=dry_run,
            finished_at=finished_at,
            found=found,
            id=id,
            kind=kind,
            outcome=outcome,
            pages=pages,
            phase=phase,
            reached=reached,
            requests=requests,
            since=since,
            source_id=source_id,
            started_at=started_at,
            until=until,
            error=error,
            missing_permission=missing_permission,
            note=note,
        )

        return reconcile_run

