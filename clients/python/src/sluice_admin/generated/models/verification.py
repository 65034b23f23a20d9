from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Verification")



@_attrs_define
class Verification:
    """ 
        Attributes:
            outcome (str):
            scheme (str):
     """

    outcome: str
    scheme: str





    def to_dict(self) -> dict[str, Any]:
        outcome = self.outcome

        scheme = self.scheme


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "outcome": outcome,
            "scheme": scheme,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        outcome = d.pop("outcome")

        scheme = d.pop("scheme")

        verification = cls(
            outcome=outcome,
            scheme=scheme,
        )

        return verification

