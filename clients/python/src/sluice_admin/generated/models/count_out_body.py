from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="CountOutBody")



@_attrs_define
class CountOutBody:
    """ 
        Attributes:
            pending (int): Pending dead letters the filter selects: what POST /dead-letters/replay with the same filter
                would replay now.
     """

    pending: int





    def to_dict(self) -> dict[str, Any]:
        pending = self.pending


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "pending": pending,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        pending = d.pop("pending")

        count_out_body = cls(
            pending=pending,
        )

        return count_out_body

