from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.new_token_body_role import NewTokenBodyRole
from ..types import UNSET, Unset
from uuid import UUID






T = TypeVar("T", bound="NewTokenBody")



@_attrs_define
class NewTokenBody:
    """ 
        Attributes:
            role (NewTokenBodyRole): read: GET only (payloads included, audited); operate: also acts.
            expires_in_seconds (int | Unset): Lifetime in seconds, at most a year; absent: 2592000 (720 h).
            name (str | Unset): Who or what holds it, for the list and the audit trail.
            tenant_id (UUID | Unset): Confine the token to this tenant; absent: every tenant.
     """

    role: NewTokenBodyRole
    expires_in_seconds: int | Unset = UNSET
    name: str | Unset = UNSET
    tenant_id: UUID | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        role = self.role.value

        expires_in_seconds = self.expires_in_seconds

        name = self.name

        tenant_id: str | Unset = UNSET
        if not isinstance(self.tenant_id, Unset):
            tenant_id = str(self.tenant_id)


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "role": role,
        })
        if expires_in_seconds is not UNSET:
            field_dict["expires_in_seconds"] = expires_in_seconds
        if name is not UNSET:
            field_dict["name"] = name
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        role = NewTokenBodyRole(d.pop("role"))




        expires_in_seconds = d.pop("expires_in_seconds", UNSET)

        name = d.pop("name", UNSET)

        _tenant_id = d.pop("tenant_id", UNSET)
        tenant_id: UUID | Unset
        if isinstance(_tenant_id,  Unset):
            tenant_id = UNSET
        else:
            tenant_id = UUID(_tenant_id)




        new_token_body = cls(
            role=role,
            expires_in_seconds=expires_in_seconds,
            name=name,
            tenant_id=tenant_id,
        )

        return new_token_body

