from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.rewind_body_to import RewindBodyTo
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="RewindBody")



@_attrs_define
class RewindBody:
    """ 
        Attributes:
            dry_run (bool | Unset): Say what would move and commit nothing; false executes. Default true. Default: True.
            offset (int | Unset): This offset in every partition, kept within its start and end.
            time (datetime.datetime | Unset): The first record at or after this time (a partition with none: its end).
            to (RewindBodyTo | Unset): The start or the end of every partition.
     """

    dry_run: bool | Unset = True
    offset: int | Unset = UNSET
    time: datetime.datetime | Unset = UNSET
    to: RewindBodyTo | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        dry_run = self.dry_run

        offset = self.offset

        time: str | Unset = UNSET
        if not isinstance(self.time, Unset):
            time = self.time.isoformat()

        to: str | Unset = UNSET
        if not isinstance(self.to, Unset):
            to = self.to.value



        field_dict: dict[str, Any] = {}

        field_dict.update({
        })
        if dry_run is not UNSET:
            field_dict["dry_run"] = dry_run
        if offset is not UNSET:
            field_dict["offset"] = offset
        if time is not UNSET:
            field_dict["time"] = time
        if to is not UNSET:
            field_dict["to"] = to

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dry_run = d.pop("dry_run", UNSET)

        offset = d.pop("offset", UNSET)

        _time = d.pop("time", UNSET)
        time: datetime.datetime | Unset
        if isinstance(_time,  Unset):
            time = UNSET
        else:
            time = datetime.datetime.fromisoformat(_time)




        _to = d.pop("to", UNSET)
        to: RewindBodyTo | Unset
        if isinstance(_to,  Unset):
            to = UNSET
        else:
            to = RewindBodyTo(_to)




        rewind_body = cls(
            dry_run=dry_run,
            offset=offset,
            time=time,
            to=to,
        )

        return rewind_body

