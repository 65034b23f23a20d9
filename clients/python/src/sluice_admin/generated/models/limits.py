from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Limits")



@_attrs_define
class Limits:
    """ 
        Attributes:
            burst (int): Largest burst of events (1 to 1,000,000).
            rate (float): Events per second per ingest instance (above 0, at most 1,000,000).
     """

    burst: int
    rate: float





    def to_dict(self) -> dict[str, Any]:
        burst = self.burst

        rate = self.rate


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "burst": burst,
            "rate": rate,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        burst = d.pop("burst")

        rate = d.pop("rate")

        limits = cls(
            burst=burst,
            rate=rate,
        )

        return limits

