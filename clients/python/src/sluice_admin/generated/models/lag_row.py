from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset






T = TypeVar("T", bound="LagRow")



@_attrs_define
class LagRow:
    """ 
        Attributes:
            committed (int):
            end (int):
            group (str):
            lag (int):
            partition (int):
            start (int):
            state (str):
            topic (str):
            member (str | Unset):
     """

    committed: int
    end: int
    group: str
    lag: int
    partition: int
    start: int
    state: str
    topic: str
    member: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        committed = self.committed

        end = self.end

        group = self.group

        lag = self.lag

        partition = self.partition

        start = self.start

        state = self.state

        topic = self.topic

        member = self.member


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "committed": committed,
            "end": end,
            "group": group,
            "lag": lag,
            "partition": partition,
            "start": start,
            "state": state,
            "topic": topic,
        })
        if member is not UNSET:
            field_dict["member"] = member

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        committed = d.pop("committed")

        end = d.pop("end")

        group = d.pop("group")

        lag = d.pop("lag")

        partition = d.pop("partition")

        start = d.pop("start")

        state = d.pop("state")

        topic = d.pop("topic")

        member = d.pop("member", UNSET)

        lag_row = cls(
            committed=committed,
            end=end,
            group=group,
            lag=lag,
            partition=partition,
            start=start,
            state=state,
            topic=topic,
            member=member,
        )

        return lag_row

