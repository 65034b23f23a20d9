from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="TestInBody")



@_attrs_define
class TestInBody:
    """ 
        Attributes:
            event_type (str | Unset): The type to send (kind.type, as filters name it: stripe.invoice.paid); its body is the
                tenant's last event of the type, masked, or a minimal example of its schema. A type the tenant never received
                and no schema declares: 404. Absent: the synthetic sluice.test.
     """

    event_type: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        event_type = self.event_type


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if event_type is not UNSET:
            field_dict["event_type"] = event_type

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_type = d.pop("event_type", UNSET)

        test_in_body = cls(
            event_type=event_type,
        )

        return test_in_body

