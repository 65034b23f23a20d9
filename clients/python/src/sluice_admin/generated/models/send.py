from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="Send")



@_attrs_define
class Send:
    """ 
        Attributes:
            group (str):
            idempotency_key (str):
            offset (int):
            partition (int):
            sent_at (datetime.datetime):
            status (int):
            topic (str):
     """

    group: str
    idempotency_key: str
    offset: int
    partition: int
    sent_at: datetime.datetime
    status: int
    topic: str





    def to_dict(self) -> dict[str, Any]:
        group = self.group

        idempotency_key = self.idempotency_key

        offset = self.offset

        partition = self.partition

        sent_at = self.sent_at.isoformat()

        status = self.status

        topic = self.topic


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "group": group,
            "idempotency_key": idempotency_key,
            "offset": offset,
            "partition": partition,
            "sent_at": sent_at,
            "status": status,
            "topic": topic,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        group = d.pop("group")

        idempotency_key = d.pop("idempotency_key")

        offset = d.pop("offset")

        partition = d.pop("partition")

        sent_at = datetime.datetime.fromisoformat(d.pop("sent_at"))




        status = d.pop("status")

        topic = d.pop("topic")

        send = cls(
            group=group,
            idempotency_key=idempotency_key,
            offset=offset,
            partition=partition,
            sent_at=sent_at,
            status=status,
            topic=topic,
        )

        return send

