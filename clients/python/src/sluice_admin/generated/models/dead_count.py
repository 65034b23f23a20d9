from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DeadCount")



@_attrs_define
class DeadCount:
    """ 
        Attributes:
            endpoint_id (str):
            more (bool): The selection holds more than 10000: a retry sends the oldest 10000 and says where the rest starts.
            retryable (int): Dead deliveries the selection holds, that a retry would send again now (at most 10000: one
                retry's cap).
            tenant_id (str):
     """

    endpoint_id: str
    more: bool
    retryable: int
    tenant_id: str





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        more = self.more

        retryable = self.retryable

        tenant_id = self.tenant_id


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
            "more": more,
            "retryable": retryable,
            "tenant_id": tenant_id,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        more = d.pop("more")

        retryable = d.pop("retryable")

        tenant_id = d.pop("tenant_id")

        dead_count = cls(
            endpoint_id=endpoint_id,
            more=more,
            retryable=retryable,
            tenant_id=tenant_id,
        )

        return dead_count

