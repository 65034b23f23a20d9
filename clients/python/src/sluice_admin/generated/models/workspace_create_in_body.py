from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from uuid import UUID






T = TypeVar("T", bound="WorkspaceCreateInBody")



@_attrs_define
class WorkspaceCreateInBody:
    """ 
        Attributes:
            customer (str): Provider customer id (e.g. cus_...) mapped to the workspace.
            tenant_id (UUID):
            name (str | Unset):
     """

    customer: str
    tenant_id: UUID
    name: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        customer = self.customer

        tenant_id = str(self.tenant_id)

        name = self.name


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "customer": customer,
            "tenant_id": tenant_id,
        })
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        customer = d.pop("customer")

        tenant_id = UUID(d.pop("tenant_id"))




        name = d.pop("name", UNSET)

        workspace_create_in_body = cls(
            customer=customer,
            tenant_id=tenant_id,
            name=name,
        )

        return workspace_create_in_body

