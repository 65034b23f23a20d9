from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="Delivery")



@_attrs_define
class Delivery:
    """ 
        Attributes:
            outcome (str):
            received_at (datetime.datetime):
     """

    outcome: str
    received_at: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome

        received_at = self.received_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "outcome": outcome,
            "received_at": received_at,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        outcome = d.pop("outcome")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))




        delivery = cls(
            outcome=outcome,
            received_at=received_at,
        )

        return delivery

