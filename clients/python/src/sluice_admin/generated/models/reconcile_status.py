from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.reconcile_status_phase import ReconcileStatusPhase
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="ReconcileStatus")



@_attrs_define
class ReconcileStatus:
    """ 
        Attributes:
            budget (int | None): Requests allowed per hour; null: none sent this hour.
            budget_used (int): Requests sent to the provider's API this clock hour, by every instance.
            covered_until (datetime.datetime | None): Everything before it has been read to its end by the schedule; null:
                nothing yet.
            kind (str):
            next_request_at (datetime.datetime): When the next request is allowed: now, or the next hour once the budget is
                spent.
            reached (datetime.datetime | None): How far back the window in progress was listed: [since, reached) is left.
            since (datetime.datetime | None): The automatic window in progress; null: none.
            source_id (UUID):
            until (datetime.datetime | None):
            waiting (int): Events held for their object (what a refused lookup leaves).
            missing_permission (str | Unset):
            phase (ReconcileStatusPhase | Unset): Where in the window in progress the last run stopped.
     """

    budget: int | None
    budget_used: int
    covered_until: datetime.datetime | None
    kind: str
    next_request_at: datetime.datetime
    reached: datetime.datetime | None
    since: datetime.datetime | None
    source_id: UUID
    until: datetime.datetime | None
    waiting: int
    missing_permission: str | Unset = UNSET
    phase: ReconcileStatusPhase | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        budget: int | None
        budget = self.budget

        budget_used = self.budget_used

        covered_until: None | str
        if isinstance(self.covered_until, datetime.datetime):
            covered_until = self.covered_until.isoformat()
        else:
            covered_until = self.covered_until

        kind = self.kind

        next_request_at = self.next_request_at.isoformat()

        reached: None | str
        if isinstance(self.reached, datetime.datetime):
            reached = self.reached.isoformat()
        else:
            reached = self.reached

        since: None | str
        if isinstance(self.since, datetime.datetime):
            since = self.since.isoformat()
        else:
            since = self.since

        source_id = str(self.source_id)

        until: None | str
        if isinstance(self.until, datetime.datetime):
            until = self.until.isoformat()
        else:
            until = self.until

        waiting = self.waiting

        missing_permission = self.missing_permission

        phase: str | Unset = UNSET
        if not isinstance(self.phase, Unset):
            phase = self.phase.value



        field_dict: dict[str, Any] = {}

        field_dict.update({
            "budget": budget,
            "budget_used": budget_used,
            "covered_until": covered_until,
            "kind": kind,
            "next_request_at": next_request_at,
            "reached": reached,
            "since": since,
            "source_id": source_id,
            "until": until,
            "waiting": waiting,
        })
        if missing_permission is not UNSET:
            field_dict["missing_permission"] = missing_permission
        if phase is not UNSET:
            field_dict["phase"] = phase

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_budget(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        budget = _parse_budget(d.pop("budget"))


        budget_used = d.pop("budget_used")

        def _parse_covered_until(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                covered_until_type_0 = datetime.datetime.fromisoformat(data)



                return covered_until_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        covered_until = _parse_covered_until(d.pop("covered_until"))


        kind = d.pop("kind")

        next_request_at = datetime.datetime.fromisoformat(d.pop("next_request_at"))




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


        waiting = d.pop("waiting")

        missing_permission = d.pop("missing_permission", UNSET)

        _phase = d.pop("phase", UNSET)
        phase: ReconcileStatusPhase | Unset
        if isinstance(_phase,  Unset):
            phase = UNSET
        else:
            phase = ReconcileStatusPhase(_phase)




        reconcile_status = cls(
            budget=budget,
            budget_used=budget_used,
            covered_until=covered_until,
            kind=kind,
            next_request_at=next_request_at,
            reached=reached,
            since=since,
            source_id=source_id,
            until=until,
            waiting=waiting,
            missing_permission=missing_permission,
            phase=phase,
        )

        return reconcile_status

