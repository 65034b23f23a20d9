from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="HourFigures")



@_attrs_define
class HourFigures:
    """ 
        Attributes:
            attempts (int):
            delivered (int):
            failed (int):
            hour (datetime.datetime):
     """

    attempts: int
    delivered: int
    failed: int
    hour: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        delivered = self.delivered

        failed = self.failed

        hour = self.hour.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "attempts": attempts,
            "delivered": delivered,
            "failed": failed,
            "hour": hour,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempts = d.pop("attempts")

        delivered = d.pop("delivered")

        failed = d.pop("failed")

        hour = datetime.datetime.fromisoformat(d.pop("hour"))




        hour_figures = cls(
            attempts=attempts,
            delivered=delivered,
            failed=failed,
            hour=hour,
        )

        return hour_figures

