from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="Waiting")



@_attrs_define
class Waiting:
    """ 
        Attributes:
            group (str):
            offset (int):
            partition (int):
            reason (str):
            topic (str):
            waiting_since (datetime.datetime):
     """

    group: str
    offset: int
    partition: int
    reason: str
    topic: str
    waiting_since: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        group = self.group

        offset = self.offset

        partition = self.partition

        reason = self.reason

        topic = self.topic

        waiting_since = self.waiting_since.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "group": group,
            "offset": offset,
            "partition": partition,
            "reason": reason,
            "topic": topic,
            "waiting_since": waiting_since,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        group = d.pop("group")

        offset = d.pop("offset")

        partition = d.pop("partition")

        reason = d.pop("reason")

        topic = d.pop("topic")

        waiting_since = datetime.datetime.fromisoformat(d.pop("waiting_since"))




        waiting = cls(
            group=group,
            offset=offset,
            partition=partition,
            reason=reason,
            topic=topic,
            waiting_since=waiting_since,
        )

        return waiting

