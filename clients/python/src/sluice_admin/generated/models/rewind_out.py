from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.rewind_move import RewindMove





T = TypeVar("T", bound="RewindOut")



@_attrs_define
class RewindOut:
    """ 
        Attributes:
            dry_run (bool):
            group (str):
            moves (list[RewindMove]):
     """

    dry_run: bool
    group: str
    moves: list[RewindMove]





    def to_dict(self) -> dict[str, Any]:
        from ..models.rewind_move import RewindMove # noqa: PLC0415
        dry_run = self.dry_run

        group = self.group

        moves = []
        for moves_item_data in self.moves:
            moves_item = moves_item_data.to_dict()
            moves.append(moves_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "dry_run": dry_run,
            "group": group,
            "moves": moves,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.rewind_move import RewindMove # noqa: PLC0415
        d = dict(src_dict)
        dry_run = d.pop("dry_run")

        group = d.pop("group")

        moves = []
        _moves = d.pop("moves")
        for moves_item_data in (_moves):
            moves_item = RewindMove.from_dict(moves_item_data)



            moves.append(moves_item)


        rewind_out = cls(
            dry_run=dry_run,
            group=group,
            moves=moves,
        )

        return rewind_out

