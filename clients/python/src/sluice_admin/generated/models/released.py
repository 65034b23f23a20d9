from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="Released")



@_attrs_define
class Released:
    """ 
        Attributes:
            dataschema (str):
            event_type (str):
            expired (int):
            quarantined (int):
            released (int):
            source_kind (str):
            version (int):
     """

    dataschema: str
    event_type: str
    expired: int
    quarantined: int
    released: int
    source_kind: str
    version: int





    def to_dict(self) -> dict[str, Any]:
        dataschema = self.dataschema

        event_type = self.event_type

        expired = self.expired

        quarantined = self.quarantined

        released = self.released

        source_kind = self.source_kind

        version = self.version


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "dataschema": dataschema,
            "event_type": event_type,
            "expired": expired,
            "quarantined": quarantined,
            "released": released,
            "source_kind": source_kind,
            "version": version,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dataschema = d.pop("dataschema")

        event_type = d.pop("event_type")

        expired = d.pop("expired")

        quarantined = d.pop("quarantined")

        released = d.pop("released")

        source_kind = d.pop("source_kind")

        version = d.pop("version")

        released = cls(
            dataschema=dataschema,
            event_type=event_type,
            expired=expired,
            quarantined=quarantined,
            released=released,
            source_kind=source_kind,
            version=version,
        )

        return released

