from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.portal_link_request_access import PortalLinkRequestAccess
from ..models.portal_link_request_scope import PortalLinkRequestScope
from ..types import UNSET, Unset






T = TypeVar("T", bound="PortalLinkRequest")



@_attrs_define
class PortalLinkRequest:
    """ 
        Attributes:
            access (PortalLinkRequestAccess): read: look only (no actions, no payloads); manage: also act, and read the
                payloads the scope shows.
            scope (PortalLinkRequestScope): destinations: the tenant's endpoints and deliveries only; tenant: the tenant's
                whole view.
            session_seconds (int | Unset): How long the session the link starts lasts; absent: 3600 (an hour, the longest).
     """

    access: PortalLinkRequestAccess
    scope: PortalLinkRequestScope
    session_seconds: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        access = self.access.value

        scope = self.scope.value

        session_seconds = self.session_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "access": access,
            "scope": scope,
        })
        if session_seconds is not UNSET:
            field_dict["session_seconds"] = session_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        access = PortalLinkRequestAccess(d.pop("access"))




        scope = PortalLinkRequestScope(d.pop("scope"))




        session_seconds = d.pop("session_seconds", UNSET)

        portal_link_request = cls(
            access=access,
            scope=scope,
            session_seconds=session_seconds,
        )

        return portal_link_request

