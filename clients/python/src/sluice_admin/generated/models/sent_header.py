from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="SentHeader")



@_attrs_define
class SentHeader:
    """ 
        Attributes:
            name (str):
            value (str):
            masked (bool | Unset): The value is a secret (a signature, a static header's value) and is not shown: value says
                what stands there.
     """

    name: str
    value: str
    masked: bool | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        name = self.name

        value = self.value

        masked = self.masked


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "name": name,
            "value": value,
        })
        if masked is not UNSET:
            field_dict["masked"] = masked

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        value = d.pop("value")

        masked = d.pop("masked", UNSET)

        sent_header = cls(
            name=name,
            value=value,
            masked=masked,
        )

        return sent_header

