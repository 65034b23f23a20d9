from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="SlotStatus")



@_attrs_define
class SlotStatus:
    """ 
        Attributes:
            active (bool):
            exists (bool):
            lag_bytes (int):
            slot (str):
            confirmed_lsn (str | Unset):
            confirmed_time (datetime.datetime | Unset):
            wal_status (str | Unset):
     """

    active: bool
    exists: bool
    lag_bytes: int
    slot: str
    confirmed_lsn: str | Unset = UNSET
    confirmed_time: datetime.datetime | Unset = UNSET
    wal_status: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        active = self.active

        exists = self.exists

        lag_bytes = self.lag_bytes

        slot = self.slot

        confirmed_lsn = self.confirmed_lsn

        confirmed_time: str | Unset = UNSET
        if not isinstance(self.confirmed_time, Unset):
            confirmed_time = self.confirmed_time.isoformat()

        wal_status = self.wal_status


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "active": active,
            "exists": exists,
            "lag_bytes": lag_bytes,
            "slot": slot,
        })
        if confirmed_lsn is not UNSET:
            field_dict["confirmed_lsn"] = confirmed_lsn
        if confirmed_time is not UNSET:
            field_dict["confirmed_time"] = confirmed_time
        if wal_status is not UNSET:
            field_dict["wal_status"] = wal_status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        active = d.pop("active")

        exists = d.pop("exists")

        lag_bytes = d.pop("lag_bytes")

        slot = d.pop("slot")

        confirmed_lsn = d.pop("confirmed_lsn", UNSET)

        _confirmed_time = d.pop("confirmed_time", UNSET)
        confirmed_time: datetime.datetime | Unset
        if isinstance(_confirmed_time,  Unset):
            confirmed_time = UNSET
        else:
            confirmed_time = datetime.datetime.fromisoformat(_confirmed_time)




        wal_status = d.pop("wal_status", UNSET)

        slot_status = cls(
            active=active,
            exists=exists,
            lag_bytes=lag_bytes,
            slot=slot,
            confirmed_lsn=confirmed_lsn,
            confirmed_time=confirmed_time,
            wal_status=wal_status,
        )

        return slot_status

