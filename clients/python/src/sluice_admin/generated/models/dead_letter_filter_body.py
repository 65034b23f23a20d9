from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="DeadLetterFilterBody")



@_attrs_define
class DeadLetterFilterBody:
    """ 
        Attributes:
            group (str | Unset): Only this consumer group's.
            reason (str | Unset): Only letters whose reason contains this, case-insensitively.
            since (datetime.datetime | Unset): Only letters that last failed from this time.
            tenant_id (UUID | Unset): Only this tenant's (a scoped token: its own, whatever is named).
            until (datetime.datetime | Unset): Only letters that last failed before this time; after since.
     """

    group: str | Unset = UNSET
    reason: str | Unset = UNSET
    since: datetime.datetime | Unset = UNSET
    tenant_id: UUID | Unset = UNSET
    until: datetime.datetime | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        group = self.group

        reason = self.reason

        since: str | Unset = UNSET
        if not isinstance(self.since, Unset):
            since = self.since.isoformat()

        tenant_id: str | Unset = UNSET
        if not isinstance(self.tenant_id, Unset):
            tenant_id = str(self.tenant_id)

        until: str | Unset = UNSET
        if not isinstance(self.until, Unset):
            until = self.until.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if group is not UNSET:
            field_dict["group"] = group
        if reason is not UNSET:
            field_dict["reason"] = reason
        if since is not UNSET:
            field_dict["since"] = since
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id
        if until is not UNSET:
            field_dict["until"] = until

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        group = d.pop("group", UNSET)

        reason = d.pop("reason", UNSET)

        _since = d.pop("since", UNSET)
        since: datetime.datetime | Unset
        if isinstance(_since,  Unset):
            since = UNSET
        else:
            since = datetime.datetime.fromisoformat(_since)




        _tenant_id = d.pop("tenant_id", UNSET)
        tenant_id: UUID | Unset
        if isinstance(_tenant_id,  Unset):
            tenant_id = UNSET
        else:
            tenant_id = UUID(_tenant_id)




        _until = d.pop("until", UNSET)
        until: datetime.datetime | Unset
        if isinstance(_until,  Unset):
            until = UNSET
        else:
            until = datetime.datetime.fromisoformat(_until)




        dead_letter_filter_body = cls(
            group=group,
            reason=reason,
            since=since,
            tenant_id=tenant_id,
            until=until,
        )

        return dead_letter_filter_body

