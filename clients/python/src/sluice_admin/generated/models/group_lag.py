from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.lag_row import LagRow





T = TypeVar("T", bound="GroupLag")



@_attrs_define
class GroupLag:
    """ 
        Attributes:
            group (str):
            lag (int):
            partitions (list[LagRow] | None):
            state (str):
            slowest (LagRow | Unset):
     """

    group: str
    lag: int
    partitions: list[LagRow] | None
    state: str
    slowest: LagRow | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.lag_row import LagRow # noqa: PLC0415
        group = self.group

        lag = self.lag

        partitions: list[dict[str, Any]] | None
        if isinstance(self.partitions, list):
            partitions = []
            for partitions_type_0_item_data in self.partitions:
                partitions_type_0_item = partitions_type_0_item_data.to_dict()
                partitions.append(partitions_type_0_item)


        else:
            partitions = self.partitions

        state = self.state

        slowest: dict[str, Any] | Unset = UNSET
        if not isinstance(self.slowest, Unset):
            slowest = self.slowest.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "group": group,
            "lag": lag,
            "partitions": partitions,
            "state": state,
        })
        if slowest is not UNSET:
            field_dict["slowest"] = slowest

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.lag_row import LagRow # noqa: PLC0415
        d = dict(src_dict)
        group = d.pop("group")

        lag = d.pop("lag")

        def _parse_partitions(data: object) -> list[LagRow] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                partitions_type_0 = []
                _partitions_type_0 = data
                for partitions_type_0_item_data in (_partitions_type_0):
                    partitions_type_0_item = LagRow.from_dict(partitions_type_0_item_data)



                    partitions_type_0.append(partitions_type_0_item)

                return partitions_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[LagRow] | None, data)

        partitions = _parse_partitions(d.pop("partitions"))


        state = d.pop("state")

        _slowest = d.pop("slowest", UNSET)
        slowest: LagRow | Unset
        if isinstance(_slowest,  Unset):
            slowest = UNSET
        else:
            slowest = LagRow.from_dict(_slowest)




        group_lag = cls(
            group=group,
            lag=lag,
            partitions=partitions,
            state=state,
            slowest=slowest,
        )

        return group_lag

