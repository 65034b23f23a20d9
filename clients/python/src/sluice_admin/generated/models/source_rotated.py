from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="SourceRotated")



@_attrs_define
class SourceRotated:
    """ 
        Attributes:
            old_secrets_expire_at (datetime.datetime):
            secret (str | Unset): Only when Sluice made the secret: shown this once.
     """

    old_secrets_expire_at: datetime.datetime
    secret: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        old_secrets_expire_at = self.old_secrets_expire_at.isoformat()

        secret = self.secret


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "old_secrets_expire_at": old_secrets_expire_at,
        })
        if secret is not UNSET:
            field_dict["secret"] = secret

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        old_secrets_expire_at = datetime.datetime.fromisoformat(d.pop("old_secrets_expire_at"))




        secret = d.pop("secret", UNSET)

        source_rotated = cls(
            old_secrets_expire_at=old_secrets_expire_at,
            secret=secret,
        )

        return source_rotated

