from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.dead_letter_detail_headers import DeadLetterDetailHeaders
  from ..models.payload import Payload





T = TypeVar("T", bound="DeadLetterDetail")



@_attrs_define
class DeadLetterDetail:
    """ 
        Attributes:
            attempts (int):
            event_id (str):
            event_type (str):
            first_failed_at (datetime.datetime):
            group (str):
            headers (DeadLetterDetailHeaders):
            id (int):
            key (str):
            last_failed_at (datetime.datetime):
            offset (int):
            partition (int):
            payload (Payload):
            reason (str):
            tenant_id (str):
            topic (str):
            inbox_id (str | Unset):
            replayed_at (datetime.datetime | Unset):
     """

    attempts: int
    event_id: str
    event_type: str
    first_failed_at: datetime.datetime
    group: str
    headers: DeadLetterDetailHeaders
    id: int
    key: str
    last_failed_at: datetime.datetime
    offset: int
    partition: int
    payload: Payload
    reason: str
    tenant_id: str
    topic: str
    inbox_id: str | Unset = UNSET
    replayed_at: datetime.datetime | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.dead_letter_detail_headers import DeadLetterDetailHeaders # noqa: PLC0415
        from ..models.payload import Payload # noqa: PLC0415
        attempts = self.attempts

        event_id = self.event_id

        event_type = self.event_type

        first_failed_at = self.first_failed_at.isoformat()

        group = self.group

        headers = self.headers.to_dict()

        id = self.id

        key = self.key

        last_failed_at = self.last_failed_at.isoformat()

        offset = self.offset

        partition = self.partition

        payload = self.payload.to_dict()

        reason = self.reason

        tenant_id = self.tenant_id

        topic = self.topic

        inbox_id = self.inbox_id

        replayed_at: str | Unset = UNSET
        if not isinstance(self.replayed_at, Unset):
            replayed_at = self.replayed_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "attempts": attempts,
            "event_id": event_id,
            "event_type": event_type,
            "first_failed_at": first_failed_at,
            "group": group,
            "headers": headers,
            "id": id,
            "key": key,
            "last_failed_at": last_failed_at,
            "offset": offset,
            "partition": partition,
            "payload": payload,
            "reason": reason,
            "tenant_id": tenant_id,
            "topic": topic,
        })
        if inbox_id is not UNSET:
            field_dict["inbox_id"] = inbox_id
        if replayed_at is not UNSET:
            field_dict["replayed_at"] = replayed_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.dead_letter_detail_headers import DeadLetterDetailHeaders # noqa: PLC0415
        from ..models.payload import Payload # noqa: PLC0415
        d = dict(src_dict)
        attempts = d.pop("attempts")

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        first_failed_at = datetime.datetime.fromisoformat(d.pop("first_failed_at"))




        group = d.pop("group")

        headers = DeadLetterDetailHeaders.from_dict(d.pop("headers"))




        id = d.pop("id")

        key = d.pop("key")

        last_failed_at = datetime.datetime.fromisoformat(d.pop("last_failed_at"))




        offset = d.pop("offset")

        partition = d.pop("partition")

        payload = Payload.from_dict(d.pop("payload"))




        reason = d.pop("reason")

        tenant_id = d.pop("tenant_id")

        topic = d.pop("topic")

        inbox_id = d.pop("inbox_id", UNSET)

        _replayed_at = d.pop("replayed_at", UNSET)
        replayed_at: datetime.datetime | Unset
        if isinstance(_replayed_at,  Unset):
            replayed_at = UNSET
        else:
            replayed_at = datetime.datetime.fromisoformat(_replayed_at)




        dead_letter_detail = cls(
            attempts=attempts,
            event_id=event_id,
            event_type=event_type,
            first_failed_at=first_failed_at,
            group=group,
            headers=headers,
            id=id,
            key=key,
            last_failed_at=last_failed_at,
            offset=offset,
            partition=partition,
            payload=payload,
            reason=reason,
            tenant_id=tenant_id,
            topic=topic,
            inbox_id=inbox_id,
            replayed_at=replayed_at,
        )

        return dead_letter_detail

