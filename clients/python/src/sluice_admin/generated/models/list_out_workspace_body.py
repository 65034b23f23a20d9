from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.workspace import Workspace





T = TypeVar("T", bound="ListOutWorkspaceBody")



@_attrs_define
class ListOutWorkspaceBody:
    """ 
        Attributes:
            items (list[Workspace]):
            next_cursor (str | Unset): Pass as cursor for the next page; absent on the last page.
     """

    items: list[Workspace]
    next_cursor: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.workspace import Workspace # noqa: PLC0415
        items = []
        for items_item_data in self.items:
            items_item = items_item_data.to_dict()
            items.append(items_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "items": items,
        })
        if next_cursor is not UNSET:
            field_dict["next_cursor"] = next_cursor

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.workspace import Workspace # noqa: PLC0415
        d = dict(src_dict)
        items = []
        _items = d.pop("items")
        for items_item_data in (_items):
            items_item = Workspace.from_dict(items_item_data)



            items.append(items_item)


        next_cursor = d.pop("next_cursor", UNSET)

        list_out_workspace_body = cls(
            items=items,
            next_cursor=next_cursor,
        )

        return list_out_workspace_body

