from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast






T = TypeVar("T", bound="ReplayResult")



@_attrs_define
class ReplayResult:
    """ 
        Attributes:
            replayed (list[int] | None):
            failed_id (int | Unset):
     """

    replayed: list[int] | None
    failed_id: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        replayed: list[int] | None
        if isinstance(self.replayed, list):
            replayed = self.replayed


        else:
            replayed = self.replayed

        failed_id = self.failed_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "replayed": replayed,
        })
        if failed_id is not UNSET:
            field_dict["failed_id"] = failed_id

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        def _parse_replayed(data: object) -> list[int] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                replayed_type_0 = cast(list[int], data)

                return replayed_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[int] | None, data)

        replayed = _parse_replayed(d.pop("replayed"))


        failed_id = d.pop("failed_id", UNSET)

        replay_result = cls(
            replayed=replayed,
            failed_id=failed_id,
        )

        return replay_result

