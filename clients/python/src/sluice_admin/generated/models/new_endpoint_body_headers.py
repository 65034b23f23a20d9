from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="NewEndpointBodyHeaders")



@_attrs_define
class NewEndpointBodyHeaders:
    """ Static headers sent on every request (sealed, never shown again: reads list their names). At most 20, names and
    values 4 KiB in all; names are HTTP tokens; webhook-*, ce-*, content-type, content-length, host, traceparent,
    tracestate, user-agent and hop-by-hop headers are Sluice's (422). Authorization is allowed.

     """

    additional_properties: dict[str, str] = _attrs_field(init=False, factory=dict)





    def to_dict(self) -> dict[str, Any]:
        
        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        new_endpoint_body_headers = cls(
        )


        new_endpoint_body_headers.additional_properties = d
        return new_endpoint_body_headers

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> str:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
