from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.entry_outcome import EntryOutcome
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Entry")



@_attrs_define
class Entry:
    """ 
        Attributes:
            action (str):
            at (datetime.datetime):
            id (int):
            outcome (EntryOutcome):
            resource (str):
            target_id (str):
            tenant_id (str | Unset):
            token_id (str | Unset):
     """

    action: str
    at: datetime.datetime
    id: int
    outcome: EntryOutcome
    resource: str
    target_id: str
    tenant_id: str | Unset = UNSET
    token_id: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        action = self.action

        at = self.at.isoformat()

        id = self.id

        outcome = self.outcome.value

        resource = self.resource

        target_id = self.target_id

        tenant_id = self.tenant_id

        token_id = self.token_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "action": action,
            "at": at,
            "id": id,
            "outcome": outcome,
            "resource": resource,
            "target_id": target_id,
        })
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id
        if token_id is not UNSET:
            field_dict["token_id"] = token_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        action = d.pop("action")

        at = datetime.datetime.fromisoformat(d.pop("at"))




        id = d.pop("id")

        outcome = EntryOutcome(d.pop("outcome"))




        resource = d.pop("resource")

        target_id = d.pop("target_id")

        tenant_id = d.pop("tenant_id", UNSET)

        token_id = d.pop("token_id", UNSET)

        entry = cls(
            action=action,
            at=at,
            id=id,
            outcome=outcome,
            resource=resource,
            target_id=target_id,
            tenant_id=tenant_id,
            token_id=token_id,
        )

        return entry

