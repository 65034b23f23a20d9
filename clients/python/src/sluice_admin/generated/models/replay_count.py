from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="ReplayCount")



@_attrs_define
class ReplayCount:
    """ 
        Attributes:
            endpoint_id (str):
            more (bool): The window holds more than 10000: a replay sends the oldest 10000 and says where the rest starts.
            replayable (int): Delivered and dead deliveries of the window a replay would send again now (at most 10000: one
                replay's cap).
            tenant_id (str):
     """

    endpoint_id: str
    more: bool
    replayable: int
    tenant_id: str





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        more = self.more

        replayable = self.replayable

        tenant_id = self.tenant_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
            "more": more,
            "replayable": replayable,
            "tenant_id": tenant_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        more = d.pop("more")

        replayable = d.pop("replayable")

        tenant_id = d.pop("tenant_id")

        replay_count = cls(
            endpoint_id=endpoint_id,
            more=more,
            replayable=replayable,
            tenant_id=tenant_id,
        )

        return replay_count

