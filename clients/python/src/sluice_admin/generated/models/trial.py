from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.trial_on import TrialOn
from ..types import UNSET, Unset






T = TypeVar("T", bound="Trial")



@_attrs_define
class Trial:
    """ 
        Attributes:
            on (TrialOn): What the transformation was tried on: sample (the transformation_sample of the request), event
                (the tenant's last event of a type the endpoint takes) or none (the tenant has no such event yet: it was only
                checked).
            event_id (str | Unset): The event tried on (on: event).
            output (Any | Unset): The body it yielded: what the endpoint would have been sent.
     """

    on: TrialOn
    event_id: str | Unset = UNSET
    output: Any | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        on = self.on.value

        event_id = self.event_id

        output = self.output


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "on": on,
        })
        if event_id is not UNSET:
            field_dict["event_id"] = event_id
        if output is not UNSET:
            field_dict["output"] = output

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        on = TrialOn(d.pop("on"))




        event_id = d.pop("event_id", UNSET)

        output = d.pop("output", UNSET)

        trial = cls(
            on=on,
            event_id=event_id,
            output=output,
        )

        return trial

