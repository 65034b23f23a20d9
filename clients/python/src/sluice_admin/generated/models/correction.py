from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="Correction")



@_attrs_define
class Correction:
    """ 
        Attributes:
            at (datetime.datetime):
            event_id (str):
            outcome (str):
            run_id (int):
     """

    at: datetime.datetime
    event_id: str
    outcome: str
    run_id: int





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        event_id = self.event_id

        outcome = self.outcome

        run_id = self.run_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "at": at,
            "event_id": event_id,
            "outcome": outcome,
            "run_id": run_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        event_id = d.pop("event_id")

        outcome = d.pop("outcome")

        run_id = d.pop("run_id")

        correction = cls(
            at=at,
            event_id=event_id,
            outcome=outcome,
            run_id=run_id,
        )

        return correction

