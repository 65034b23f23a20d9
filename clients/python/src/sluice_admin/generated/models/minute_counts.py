from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.minute_counts_by_status import MinuteCountsByStatus





T = TypeVar("T", bound="MinuteCounts")



@_attrs_define
class MinuteCounts:
    """ 
        Attributes:
            by_status (MinuteCountsByStatus):
            minute (datetime.datetime):
     """

    by_status: MinuteCountsByStatus
    minute: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        from ..models.minute_counts_by_status import MinuteCountsByStatus # noqa: PLC0415
        by_status = self.by_status.to_dict()

        minute = self.minute.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "by_status": by_status,
            "minute": minute,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.minute_counts_by_status import MinuteCountsByStatus # noqa: PLC0415
        d = dict(src_dict)
        by_status = MinuteCountsByStatus.from_dict(d.pop("by_status"))




        minute = datetime.datetime.fromisoformat(d.pop("minute"))




        minute_counts = cls(
            by_status=by_status,
            minute=minute,
        )

        return minute_counts

