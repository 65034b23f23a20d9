from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.portal_link_access import PortalLinkAccess
from ..models.portal_link_scope import PortalLinkScope
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="PortalLink")



@_attrs_define
class PortalLink:
    """ 
        Attributes:
            access (PortalLinkAccess): read: look only (no payloads, no actions); manage: also act, and read the payloads
                the scope shows.
            created_at (datetime.datetime):
            expires_at (datetime.datetime): When the link expires unused.
            id (UUID):
            scope (PortalLinkScope): destinations: the tenant's endpoints and deliveries only; tenant: the tenant's whole
                view.
            session_seconds (int): How long the session the link starts lasts, at most 3600.
            tenant_id (UUID):
            session_token_id (UUID | Unset): The admin token of the session the link's use started (revoke it to end the
                session).
            used_at (datetime.datetime | Unset): When the link was used; absent: not yet.
     """

    access: PortalLinkAccess
    created_at: datetime.datetime
    expires_at: datetime.datetime
    id: UUID
    scope: PortalLinkScope
    session_seconds: int
    tenant_id: UUID
    session_token_id: UUID | Unset = UNSET
    used_at: datetime.datetime | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        created_at = self.created_at.isoformat()

        expires_at = self.expires_at.isoformat()

        id = str(self.id)

        scope = self.scope.value

        session_seconds = self.session_seconds

        tenant_id = str(self.tenant_id)

        session_token_id: str | Unset = UNSET
        if not isinstance(self.session_token_id, Unset):
            session_token_id = str(self.session_token_id)

        used_at: str | Unset = UNSET
        if not isinstance(self.used_at, Unset):
            used_at = self.used_at.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "access": access,
            "created_at": created_at,
            "expires_at": expires_at,
            "id": id,
            "scope": scope,
            "session_seconds": session_seconds,
            "tenant_id": tenant_id,
        })
        if session_token_id is not UNSET:
            field_dict["session_token_id"] = session_token_id
        if used_at is not UNSET:
            field_dict["used_at"] = used_at

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = PortalLinkAccess(d.pop("access"))




        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        expires_at = datetime.datetime.fromisoformat(d.pop("expires_at"))




        id = UUID(d.pop("id"))




        scope = PortalLinkScope(d.pop("scope"))




        session_seconds = d.pop("session_seconds")

        tenant_id = UUID(d.pop("tenant_id"))




        _session_token_id = d.pop("session_token_id", UNSET)
        session_token_id: UUID | Unset
        if isinstance(_session_token_id,  Unset):
            session_token_id = UNSET
        else:
            session_token_id = UUID(_session_token_id)




        _used_at = d.pop("used_at", UNSET)
        used_at: datetime.datetime | Unset
        if isinstance(_used_at,  Unset):
            used_at = UNSET
        else:
            used_at = datetime.datetime.fromisoformat(_used_at)




        portal_link = cls(
            access=access,
            created_at=created_at,
            expires_at=expires_at,
            id=id,
            scope=scope,
            session_seconds=session_seconds,
            tenant_id=tenant_id,
            session_token_id=session_token_id,
            used_at=used_at,
        )

        return portal_link

