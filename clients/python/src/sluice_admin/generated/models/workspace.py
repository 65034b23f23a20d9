from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
import datetime






T = TypeVar("T", bound="Workspace")



@_attrs_define
class Workspace:
    """ 
        Attributes:
            created_at (datetime.datetime):
            credits_ (int):
            customers (list[str]): Provider customer ids mapped to the workspace.
            id (str):
            name (str):
            tenant_id (str):
     """

    created_at: datetime.datetime
    credits_: int
    customers: list[str]
    id: str
    name: str
    tenant_id: str





    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at.isoformat()

        credits_ = self.credits_

        customers = self.customers



        id = self.id

        name = self.name

        tenant_id = self.tenant_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "created_at": created_at,
            "credits": credits_,
            "customers": customers,
            "id": id,
            "name": name,
            "tenant_id": tenant_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        credits_ = d.pop("credits")

        customers = cast(list[str], d.pop("customers"))


        id = d.pop("id")

        name = d.pop("name")

        tenant_id = d.pop("tenant_id")

        workspace = cls(
            created_at=created_at,
            credits_=credits_,
            customers=customers,
            id=id,
            name=name,
            tenant_id=tenant_id,
        )

        return workspace

