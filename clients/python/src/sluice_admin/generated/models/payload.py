from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.payload_state import PayloadState
from ..types import UNSET, Unset






T = TypeVar("T", bound="Payload")



@_attrs_define
class Payload:
    """ 
        Attributes:
            state (PayloadState):
            body (str | Unset):
     """

    state: PayloadState
    body: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        state = self.state.value

        body = self.body


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "state": state,
        })
        if body is not UNSET:
            field_dict["body"] = body

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        state = PayloadState(d.pop("state"))




        body = d.pop("body", UNSET)

        payload = cls(
            state=state,
            body=body,
        )

        return payload

