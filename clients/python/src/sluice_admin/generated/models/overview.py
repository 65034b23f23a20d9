from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.minute_counts import MinuteCounts





T = TypeVar("T", bound="Overview")



@_attrs_define
class Overview:
    """ 
        Attributes:
            accepted (int): Events accepted in the window, every status.
            conflicts (int): Conflicting deliveries received in the window.
            corrections (int): Reconciliation corrections made in the window.
            dead_letters_pending (int): Dead letters not replayed, of any age.
            endpoints_failing (int): Endpoints whose attempts fail now, or disabled as failing or gone.
            minutes (list[MinuteCounts]): Events accepted per minute of the window, oldest first; a minute with none is
                absent.
            since (datetime.datetime): Start of the window: the counts that are per window count from here.
            until (datetime.datetime):
     """

    accepted: int
    conflicts: int
    corrections: int
    dead_letters_pending: int
    endpoints_failing: int
    minutes: list[MinuteCounts]
    since: datetime.datetime
    until: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        from ..models.minute_counts import MinuteCounts # noqa: PLC0415
        accepted = self.accepted

        conflicts = self.conflicts

        corrections = self.corrections

        dead_letters_pending = self.dead_letters_pending

        endpoints_failing = self.endpoints_failing

        minutes = []
        for minutes_item_data in self.minutes:
            minutes_item = minutes_item_data.to_dict()
            minutes.append(minutes_item)



        since = self.since.isoformat()

        until = self.until.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "accepted": accepted,
            "conflicts": conflicts,
            "corrections": corrections,
            "dead_letters_pending": dead_letters_pending,
            "endpoints_failing": endpoints_failing,
            "minutes": minutes,
            "since": since,
            "until": until,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.minute_counts import MinuteCounts # noqa: PLC0415
        d = dict(src_dict)
        accepted = d.pop("accepted")

        conflicts = d.pop("conflicts")

        corrections = d.pop("corrections")

        dead_letters_pending = d.pop("dead_letters_pending")

        endpoints_failing = d.pop("endpoints_failing")

        minutes = []
        _minutes = d.pop("minutes")
        for minutes_item_data in (_minutes):
            minutes_item = MinuteCounts.from_dict(minutes_item_data)



            minutes.append(minutes_item)


        since = datetime.datetime.fromisoformat(d.pop("since"))




        until = datetime.datetime.fromisoformat(d.pop("until"))




        overview = cls(
            accepted=accepted,
            conflicts=conflicts,
            corrections=corrections,
            dead_letters_pending=dead_letters_pending,
            endpoints_failing=endpoints_failing,
            minutes=minutes,
            since=since,
            until=until,
        )

        return overview

