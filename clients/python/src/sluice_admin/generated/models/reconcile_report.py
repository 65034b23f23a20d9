from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.reconcile_report_outcome import ReconcileReportOutcome
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime

if TYPE_CHECKING:
  from ..models.reconcile_report_corrections import ReconcileReportCorrections





T = TypeVar("T", bound="ReconcileReport")



@_attrs_define
class ReconcileReport:
    """ 
        Attributes:
            automatic (bool): The run read the source's automatic window.
            clamped (bool): until was after now, and was cut at now.
            corrected (int):
            corrections (ReconcileReportCorrections): What the run changed, by outcome: recovered, conflict,
                redelivery_requested (a dry run: would have).
            dry_run (bool):
            found (int): What the provider listed: events, failed deliveries, fetched objects.
            kind (str):
            outcome (ReconcileReportOutcome): How the run ended: ok (read to its end), partial (read to its end, an optional
                lookup refused for want of missing_permission), budget (the source's hourly API budget ran out), incomplete (the
                run's time or fetch limit), interrupted (the process was stopping), failed (an error, in the run's row), refused
                (it never began), running, abandoned (its process died).
            pages (int):
            requests (int): Requests sent to the provider's API, throttled ones included.
            resumed (bool): The run went on with a window an earlier run began.
            run_id (int):
            since (datetime.datetime): The window read.
            source_id (UUID):
            until (datetime.datetime):
            missing_permission (str | Unset): A permission the provider refused for an optional lookup (the run is partial).
     """

    automatic: bool
    clamped: bool
    corrected: int
    corrections: ReconcileReportCorrections
    dry_run: bool
    found: int
    kind: str
    outcome: ReconcileReportOutcome
    pages: int
    requests: int
    resumed: bool
    run_id: int
    since: datetime.datetime
    source_id: UUID
    until: datetime.datetime
    missing_permission: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.reconcile_report_corrections import ReconcileReportCorrections # noqa: PLC0415
        automatic = self.automatic

        clamped = self.clamped

        corrected = self.corrected

        corrections = self.corrections.to_dict()

        dry_run = self.dry_run

        found = self.found

        kind = self.kind

        outcome = self.outcome.value

        pages = self.pages

        requests = self.requests

        resumed = self.resumed

        run_id = self.run_id

        since = self.since.isoformat()

        source_id = str(self.source_id)

        until = self.until.isoformat()

        missing_permission = self.missing_permission


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "automatic": automatic,
            "clamped": clamped,
            "corrected": corrected,
            "corrections": corrections,
            "dry_run": dry_run,
            "found": found,
            "kind": kind,
            "outcome": outcome,
            "pages": pages,
            "requests": requests,
            "resumed": resumed,
            "run_id": run_id,
            "since": since,
            "source_id": source_id,
            "until": until,
        })
        if missing_permission is not UNSET:
            field_dict["missing_permission"] = missing_permission

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.reconcile_report_corrections import ReconcileReportCorrections # noqa: PLC0415
        d = dict(src_dict)
        automatic = d.pop("automatic")

        clamped = d.pop("clamped")

        corrected = d.pop("corrected")

        corrections = ReconcileReportCorrections.from_dict(d.pop("corrections"))




        dry_run = d.pop("dry_run")

        found = d.pop("found")

        kind = d.pop("kind")

        outcome = ReconcileReportOutcome(d.pop("outcome"))




        pages = d.pop("pages")

        requests = d.pop("requests")

        resumed = d.pop("resumed")

        run_id = d.pop("run_id")

        since = datetime.datetime.fromisoformat(d.pop("since"))




        source_id = UUID(d.pop("source_id"))




        until = datetime.datetime.fromisoformat(d.pop("until"))




        missing_permission = d.pop("missing_permission", UNSET)

        reconcile_report = cls(
            automatic=automatic,
            clamped=clamped,
            corrected=corrected,
            corrections=corrections,
            dry_run=dry_run,
            found=found,
            kind=kind,
            outcome=outcome,
            pages=pages,
            requests=requests,
            resumed=resumed,
            run_id=run_id,
            since=since,
            source_id=source_id,
            until=until,
            missing_permission=missing_permission,
        )

        return reconcile_report

