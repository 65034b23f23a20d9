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
  from ..models.position import Position





T = TypeVar("T", bound="Effect")



@_attrs_define
class Effect:
    """ 
        Attributes:
            applied_at (Position):
            business_key (str):
            event_id (str):
            group (str):
            kind (str):
            this_event (bool):
            credits_ (int | Unset):
            inbox_id (int | Unset):
            operation (str | Unset):
            processed_at (datetime.datetime | Unset):
            state (str | Unset):
            workspace_id (str | Unset):
     """

    applied_at: Position
    business_key: str
    event_id: str
    group: str
    kind: str
    this_event: bool
    credits_: int | Unset = UNSET
    inbox_id: int | Unset = UNSET
    operation: str | Unset = UNSET
    processed_at: datetime.datetime | Unset = UNSET
    state: str | Unset = UNSET
    workspace_id: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.position import Position # noqa: PLC0415
        applied_at = self.applied_at.to_dict()

        business_key = self.business_key

        event_id = self.event_id

        group = self.group

        kind = self.kind

        this_event = self.this_event

        credits_ = self.credits_

        inbox_id = self.inbox_id

        operation = self.operation

        processed_at: str | Unset = UNSET
        if not isinstance(self.processed_at, Unset):
            processed_at = self.processed_at.isoformat()

        state = self.state

        workspace_id = self.workspace_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "applied_at": applied_at,
            "business_key": business_key,
            "event_id": event_id,
            "group": group,
            "kind": kind,
            "this_event": this_event,
        })
        if credits_ is not UNSET:
            field_dict["credits"] = credits_
        if inbox_id is not UNSET:
            field_dict["inbox_id"] = inbox_id
        if operation is not UNSET:
            field_dict["operation"] = operation
        if processed_at is not UNSET:
            field_dict["processed_at"] = processed_at
        if state is not UNSET:
            field_dict["state"] = state
        if workspace_id is not UNSET:
            field_dict["workspace_id"] = workspace_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.position import Position # noqa: PLC0415
        d = dict(src_dict)
        applied_at = Position.from_dict(d.pop("applied_at"))




        business_key = d.pop("business_key")

        event_id = d.pop("event_id")

        group = d.pop("group")

        kind = d.pop("kind")

        this_event = d.pop("this_event")

        credits_ = d.pop("credits", UNSET)

        inbox_id = d.pop("inbox_id", UNSET)

        operation = d.pop("operation", UNSET)

        _processed_at = d.pop("processed_at", UNSET)
        processed_at: datetime.datetime | Unset
        if isinstance(_processed_at,  Unset):
            processed_at = UNSET
        else:
            processed_at = datetime.datetime.fromisoformat(_processed_at)




        state = d.pop("state", UNSET)

        workspace_id = d.pop("workspace_id", UNSET)

        effect = cls(
            applied_at=applied_at,
            business_key=business_key,
            event_id=event_id,
            group=group,
            kind=kind,
            this_event=this_event,
            credits_=credits_,
            inbox_id=inbox_id,
            operation=operation,
            processed_at=processed_at,
            state=state,
            workspace_id=workspace_id,
        )

        return effect

