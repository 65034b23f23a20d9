from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="Position")



@_attrs_define
class Position:
    """ 
        Attributes:
            offset (int | Unset):
            partition (int | Unset):
            topic (str | Unset):
     """

    offset: int | Unset = UNSET
    partition: int | Unset = UNSET
    topic: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        offset = self.offset

        partition = self.partition

        topic = self.topic


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if offset is not UNSET:
            field_dict["offset"] = offset
        if partition is not UNSET:
            field_dict["partition"] = partition
        if topic is not UNSET:
            field_dict["topic"] = topic

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        offset = d.pop("offset", UNSET)

        partition = d.pop("partition", UNSET)

        topic = d.pop("topic", UNSET)

        position = cls(
            offset=offset,
            partition=partition,
            topic=topic,
        )

        return position

