from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.new_source_body_kind import NewSourceBodyKind
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID






T = TypeVar("T", bound="NewSourceBody")



@_attrs_define
class NewSourceBody:
    """ 
        Attributes:
            account (str): Provider account the source speaks for (part of the event key).
            kind (NewSourceBodyKind): Provider kind: one of this build's (its provider registry), as sluice source kinds
                lists them.
            secret (str): Signing secret as the provider shows it (never shown again, never repeated in a refusal).
                standard_webhooks: whsec_ followed by the base64 of the key (422 otherwise); stripe: its whsec_... string as-is;
                github, hmac: any text.
            tenant_id (UUID):
            ip_allowlist (list[str] | Unset): CIDRs deliveries may come from.
            max_body_bytes (int | Unset): Largest body; absent: the kind's default.
            settings (Any | Unset): The kind's own settings: required for kind hmac (its header, algorithm, eventId and
                eventType locators, ...); every other built-in kind takes none (422 when given).
            tolerance_seconds (int | Unset): How far a signed timestamp may be from now, in seconds (at most a day); absent:
                300.
     """

    account: str
    kind: NewSourceBodyKind
    secret: str
    tenant_id: UUID
    ip_allowlist: list[str] | Unset = UNSET
    max_body_bytes: int | Unset = UNSET
    settings: Any | Unset = UNSET
    tolerance_seconds: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        account = self.account

        kind = self.kind.value

        secret = self.secret

        tenant_id = str(self.tenant_id)

        ip_allowlist: list[str] | Unset = UNSET
        if not isinstance(self.ip_allowlist, Unset):
            ip_allowlist = self.ip_allowlist



        max_body_bytes = self.max_body_bytes

        settings = self.settings

        tolerance_seconds = self.tolerance_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account": account,
            "kind": kind,
            "secret": secret,
            "tenant_id": tenant_id,
        })
        if ip_allowlist is not UNSET:
            field_dict["ip_allowlist"] = ip_allowlist
        if max_body_bytes is not UNSET:
            field_dict["max_body_bytes"] = max_body_bytes
        if settings is not UNSET:
            field_dict["settings"] = settings
        if tolerance_seconds is not UNSET:
            field_dict["tolerance_seconds"] = tolerance_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account = d.pop("account")

        kind = NewSourceBodyKind(d.pop("kind"))




        secret = d.pop("secret")

        tenant_id = UUID(d.pop("tenant_id"))




        ip_allowlist = cast(list[str], d.pop("ip_allowlist", UNSET))


        max_body_bytes = d.pop("max_body_bytes", UNSET)

        settings = d.pop("settings", UNSET)

        tolerance_seconds = d.pop("tolerance_seconds", UNSET)

        new_source_body = cls(
            account=account,
            kind=kind,
            secret=secret,
            tenant_id=tenant_id,
            ip_allowlist=ip_allowlist,
            max_body_bytes=max_body_bytes,
            settings=settings,
            tolerance_seconds=tolerance_seconds,
        )

        return new_source_body

