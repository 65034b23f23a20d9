from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.taker_verdict import TakerVerdict
from ..types import UNSET, Unset






T = TypeVar("T", bound="Taker")



@_attrs_define
class Taker:
    """ 
        Attributes:
            endpoint_id (str):
            takes (bool):
            verdict (TakerVerdict):
            reason (str | Unset):
     """

    endpoint_id: str
    takes: bool
    verdict: TakerVerdict
    reason: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        takes = self.takes

        verdict = self.verdict.value

        reason = self.reason


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
            "takes": takes,
            "verdict": verdict,
        })
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        takes = d.pop("takes")

        verdict = TakerVerdict(d.pop("verdict"))




        reason = d.pop("reason", UNSET)

        taker = cls(
            endpoint_id=endpoint_id,
            takes=takes,
            verdict=verdict,
            reason=reason,
        )

        return taker

