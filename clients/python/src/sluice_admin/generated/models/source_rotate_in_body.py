from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="SourceRotateInBody")



@_attrs_define
class SourceRotateInBody:
    """ 
        Attributes:
            overlap_seconds (int | Unset): How long the current secrets stay valid beside the new one, in seconds (at most
                30 days); absent: 86400.
            secret (str | Unset): The new secret; absent: Sluice makes one and returns it (not for Stripe, which makes its
                own).
     """

    overlap_seconds: int | Unset = UNSET
    secret: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        overlap_seconds = self.overlap_seconds

        secret = self.secret


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if overlap_seconds is not UNSET:
            field_dict["overlap_seconds"] = overlap_seconds
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        overlap_seconds = d.pop("overlap_seconds", UNSET)

        secret = d.pop("secret", UNSET)

        source_rotate_in_body = cls(
            overlap_seconds=overlap_seconds,
            secret=secret,
        )

        return source_rotate_in_body

