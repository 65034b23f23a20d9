from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.event_status import EventStatus
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Event")



@_attrs_define
class Event:
    """ 
        Attributes:
            event_id (str):
            event_type (str):
            id (int):
            object_id (str):
            object_type (str):
            received_at (datetime.datetime):
            source_account (str):
            source_id (str):
            status (EventStatus):
            tenant_id (str):
            erased_at (datetime.datetime | Unset):
            event_time (datetime.datetime | Unset):
            reason (str | Unset):
     """

    event_id: str
    event_type: str
    id: int
    object_id: str
    object_type: str
    received_at: datetime.datetime
    source_account: str
    source_id: str
    status: EventStatus
    tenant_id: str
    erased_at: datetime.datetime | Unset = UNSET
    event_time: datetime.datetime | Unset = UNSET
    reason: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        event_id = self.event_id

        event_type = self.event_type

        id = self.id

        object_id = self.object_id

        object_type = self.object_type

        received_at = self.received_at.isoformat()

        source_account = self.source_account

        source_id = self.source_id

        status = self.status.value

        tenant_id = self.tenant_id

        erased_at: str | Unset = UNSET
        if not isinstance(self.erased_at, Unset):
            erased_at = self.erased_at.isoformat()

        event_time: str | Unset = UNSET
        if not isinstance(self.event_time, Unset):
            event_time = self.event_time.isoformat()

        reason = self.reason


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "event_id": event_id,
            "event_type": event_type,
            "id": id,
            "object_id": object_id,
            "object_type": object_type,
            "received_at": received_at,
            "source_account": source_account,
            "source_id": source_id,
            "status": status,
            "tenant_id": tenant_id,
        })
        if erased_at is not UNSET:
            field_dict["erased_at"] = erased_at
        if event_time is not UNSET:
            field_dict["event_time"] = event_time
        if reason is not UNSET:
            field_dict["reason"] = reason

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        id = d.pop("id")

        object_id = d.pop("object_id")

        object_type = d.pop("object_type")

        received_at = datetime.datetime.fromisoformat(d.pop("received_at"))




        source_account = d.pop("source_account")

        source_id = d.pop("source_id")

        status = EventStatus(d.pop("status"))




        tenant_id = d.pop("tenant_id")

        _erased_at = d.pop("erased_at", UNSET)
        erased_at: datetime.datetime | Unset
        if isinstance(_erased_at,  Unset):
            erased_at = UNSET
        else:
            erased_at = datetime.datetime.fromisoformat(_erased_at)




        _event_time = d.pop("event_time", UNSET)
        event_time: datetime.datetime | Unset
        if isinstance(_event_time,  Unset):
            event_time = UNSET
        else:
            event_time = datetime.datetime.fromisoformat(_event_time)




        reason = d.pop("reason", UNSET)

        event = cls(
            event_id=event_id,
            event_type=event_type,
            id=id,
            object_id=object_id,
            object_type=object_type,
            received_at=received_at,
            source_account=source_account,
            source_id=source_id,
            status=status,
            tenant_id=tenant_id,
            erased_at=erased_at,
            event_time=event_time,
            reason=reason,
        )

        return event

