from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.token_portal_scope import TokenPortalScope
from ..models.token_role import TokenRole
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Token")



@_attrs_define
class Token:
    """ 
        Attributes:
            created_at (datetime.datetime):
            id (str):
            name (str):
            no_expiry (bool): The token never expires: made before lifetimes were required. Replace it with one that does,
                then revoke it.
            role (TokenRole):
            expires_at (datetime.datetime | Unset):
            portal_scope (TokenPortalScope | Unset): Set on a portal session's token (made by a portal link's use):
                destinations (the tenant's endpoints and deliveries) or tenant (its whole view); absent: an admin token.
            revoked_at (datetime.datetime | Unset):
            tenant_id (str | Unset): The tenant the token is confined to; absent: every tenant.
     """

    created_at: datetime.datetime
    id: str
    name: str
    no_expiry: bool
    role: TokenRole
    expires_at: datetime.datetime | Unset = UNSET
    portal_scope: TokenPortalScope | Unset = UNSET
    revoked_at: datetime.datetime | Unset = UNSET
    tenant_id: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        no_expiry = self.no_expiry

        role = self.role.value

        expires_at: str | Unset = UNSET
        if not isinstance(self.expires_at, Unset):
            expires_at = self.expires_at.isoformat()

        portal_scope: str | Unset = UNSET
        if not isinstance(self.portal_scope, Unset):
            portal_scope = self.portal_scope.value


        revoked_at: str | Unset = UNSET
        if not isinstance(self.revoked_at, Unset):
            revoked_at = self.revoked_at.isoformat()

        tenant_id = self.tenant_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "created_at": created_at,
            "id": id,
            "name": name,
            "no_expiry": no_expiry,
            "role": role,
        })
        if expires_at is not UNSET:
            field_dict["expires_at"] = expires_at
        if portal_scope is not UNSET:
            field_dict["portal_scope"] = portal_scope
        if revoked_at is not UNSET:
            field_dict["revoked_at"] = revoked_at
        if tenant_id is not UNSET:
            field_dict["tenant_id"] = tenant_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        id = d.pop("id")

        name = d.pop("name")

        no_expiry = d.pop("no_expiry")

        role = TokenRole(d.pop("role"))




        _expires_at = d.pop("expires_at", UNSET)
        expires_at: datetime.datetime | Unset
        if isinstance(_expires_at,  Unset):
            expires_at = UNSET
        else:
            expires_at = datetime.datetime.fromisoformat(_expires_at)




        _portal_scope = d.pop("portal_scope", UNSET)
        portal_scope: TokenPortalScope | Unset
        if isinstance(_portal_scope,  Unset):
            portal_scope = UNSET
        else:
            portal_scope = TokenPortalScope(_portal_scope)




        _revoked_at = d.pop("revoked_at", UNSET)
        revoked_at: datetime.datetime | Unset
        if isinstance(_revoked_at,  Unset):
            revoked_at = UNSET
        else:
            revoked_at = datetime.datetime.fromisoformat(_revoked_at)




        tenant_id = d.pop("tenant_id", UNSET)

        token = cls(
            created_at=created_at,
            id=id,
            name=name,
            no_expiry=no_expiry,
            role=role,
            expires_at=expires_at,
            portal_scope=portal_scope,
            revoked_at=revoked_at,
            tenant_id=tenant_id,
        )

        return token

