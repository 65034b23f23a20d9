from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.limits import Limits





T = TypeVar("T", bound="Tenant")



@_attrs_define
class Tenant:
    """ 
        Attributes:
            created_at (datetime.datetime):
            id (str):
            name (str):
            limits (Limits | Unset):
     """

    created_at: datetime.datetime
    id: str
    name: str
    limits: Limits | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.limits import Limits # noqa: PLC0415
        created_at = self.created_at.isoformat()

        id = self.id

        name = self.name

        limits: dict[str, Any] | Unset = UNSET
        if not isinstance(self.limits, Unset):
            limits = self.limits.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "created_at": created_at,
            "id": id,
            "name": name,
        })
        if limits is not UNSET:
            field_dict["limits"] = limits

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.limits import Limits # noqa: PLC0415
        d = dict(src_dict)
        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        id = d.pop("id")

        name = d.pop("name")

        _limits = d.pop("limits", UNSET)
        limits: Limits | Unset
        if isinstance(_limits,  Unset):
            limits = UNSET
        else:
            limits = Limits.from_dict(_limits)




        tenant = cls(
            created_at=created_at,
            id=id,
            name=name,
            limits=limits,
        )

        return tenant

