from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.source_kind import SourceKind
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Source")



@_attrs_define
class Source:
    """ 
        Attributes:
            account (str):
            active_secrets (int): Secrets that verify deliveries now (several during a rotation).
            created_at (datetime.datetime):
            disabled (bool):
            id (str):
            ip_allowlist (list[str]): CIDRs deliveries may come from; empty: any.
            kind (SourceKind):
            tenant_id (str):
            disabled_at (datetime.datetime | Unset):
            max_body_bytes (int | Unset): Largest body; absent: the kind's default.
            tolerance_seconds (int | Unset): Signed timestamps may be this far from now; absent: the default (300).
     """

    account: str
    active_secrets: int
    created_at: datetime.datetime
    disabled: bool
    id: str
    ip_allowlist: list[str]
    kind: SourceKind
    tenant_id: str
    disabled_at: datetime.datetime | Unset = UNSET
    max_body_bytes: int | Unset = UNSET
    tolerance_seconds: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        account = self.account

        active_secrets = self.active_secrets

        created_at = self.created_at.isoformat()

        disabled = self.disabled

        id = self.id

        ip_allowlist = self.ip_allowlist



        kind = self.kind.value

        tenant_id = self.tenant_id

        disabled_at: str | Unset = UNSET
        if not isinstance(self.disabled_at, Unset):
            disabled_at = self.disabled_at.isoformat()

        max_body_bytes = self.max_body_bytes

        tolerance_seconds = self.tolerance_seconds


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "account": account,
            "active_secrets": active_secrets,
            "created_at": created_at,
            "disabled": disabled,
            "id": id,
            "ip_allowlist": ip_allowlist,
            "kind": kind,
            "tenant_id": tenant_id,
        })
        if disabled_at is not UNSET:
            field_dict["disabled_at"] = disabled_at
        if max_body_bytes is not UNSET:
            field_dict["max_body_bytes"] = max_body_bytes
        if tolerance_seconds is not UNSET:
            field_dict["tolerance_seconds"] = tolerance_seconds

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        account = d.pop("account")

        active_secrets = d.pop("active_secrets")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        disabled = d.pop("disabled")

        id = d.pop("id")

        ip_allowlist = cast(list[str], d.pop("ip_allowlist"))


        kind = SourceKind(d.pop("kind"))




        tenant_id = d.pop("tenant_id")

        _disabled_at = d.pop("disabled_at", UNSET)
        disabled_at: datetime.datetime | Unset
        if isinstance(_disabled_at,  Unset):
            disabled_at = UNSET
        else:
            disabled_at = datetime.datetime.fromisoformat(_disabled_at)




        max_body_bytes = d.pop("max_body_bytes", UNSET)

        tolerance_seconds = d.pop("tolerance_seconds", UNSET)

        source = cls(
            account=account,
            active_secrets=active_secrets,
            created_at=created_at,
            disabled=disabled,
            id=id,
            ip_allowlist=ip_allowlist,
            kind=kind,
            tenant_id=tenant_id,
            disabled_at=disabled_at,
            max_body_bytes=max_body_bytes,
            tolerance_seconds=tolerance_seconds,
        )

        return source

