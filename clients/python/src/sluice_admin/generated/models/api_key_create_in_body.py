from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from uuid import UUID






T = TypeVar("T", bound="ApiKeyCreateInBody")



@_attrs_define
class ApiKeyCreateInBody:
    """ 
        Attributes:
            tenant_id (UUID):
     """

    tenant_id: UUID





    def to_dict(self) -> dict[str, Any]:
        tenant_id = str(self.tenant_id)


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "tenant_id": tenant_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        tenant_id = UUID(d.pop("tenant_id"))




        api_key_create_in_body = cls(
            tenant_id=tenant_id,
        )

        return api_key_create_in_body

