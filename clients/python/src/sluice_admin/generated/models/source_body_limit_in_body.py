from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="SourceBodyLimitInBody")



@_attrs_define
class SourceBodyLimitInBody:
    """ 
        Attributes:
            max_body_bytes (int): Largest body; 0: the kind's default.
     """

    max_body_bytes: int





    def to_dict(self) -> dict[str, Any]:
        max_body_bytes = self.max_body_bytes


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "max_body_bytes": max_body_bytes,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        max_body_bytes = d.pop("max_body_bytes")

        source_body_limit_in_body = cls(
            max_body_bytes=max_body_bytes,
        )

        return source_body_limit_in_body

