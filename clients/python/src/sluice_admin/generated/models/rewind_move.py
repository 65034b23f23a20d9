from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="RewindMove")



@_attrs_define
class RewindMove:
    """ 
        Attributes:
            current (int):
            new (int):
            partition (int):
            reread (int):
            skipped (int):
            topic (str):
     """

    current: int
    new: int
    partition: int
    reread: int
    skipped: int
    topic: str





    def to_dict(self) -> dict[str, Any]:
        current = self.current

        new = self.new

        partition = self.partition

        reread = self.reread

        skipped = self.skipped

        topic = self.topic


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "current": current,
            "new": new,
            "partition": partition,
            "reread": reread,
            "skipped": skipped,
            "topic": topic,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        current = d.pop("current")

        new = d.pop("new")

        partition = d.pop("partition")

        reread = d.pop("reread")

        skipped = d.pop("skipped")

        topic = d.pop("topic")

        rewind_move = cls(
            current=current,
            new=new,
            partition=partition,
            reread=reread,
            skipped=skipped,
            topic=topic,
        )

        return rewind_move

