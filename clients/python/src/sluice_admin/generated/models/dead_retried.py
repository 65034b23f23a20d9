from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="DeadRetried")



@_attrs_define
class DeadRetried:
    """ 
        Attributes:
            endpoint_id (str):
            retried (int): Dead deliveries moved back to pending, due now.
            tenant_id (str):
            next_since (datetime.datetime | Unset): Set when the selection held more than 10000: retry again with this since
                (same until and filters) for the rest.
     """

    endpoint_id: str
    retried: int
    tenant_id: str
    next_since: datetime.datetime | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = self.endpoint_id

        retried = self.retried

        tenant_id = self.tenant_id

        next_since: str | Unset = UNSET
        if not isinstance(self.next_since, Unset):
            next_since = self.next_since.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
            "retried": retried,
            "tenant_id": tenant_id,
        })
        if next_since is not UNSET:
            field_dict["next_since"] = next_since

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = d.pop("endpoint_id")

        retried = d.pop("retried")

        tenant_id = d.pop("tenant_id")

        _next_since = d.pop("next_since", UNSET)
        next_since: datetime.datetime | Unset
        if isinstance(_next_since,  Unset):
            next_since = UNSET
        else:
            next_since = datetime.datetime.fromisoformat(_next_since)




        dead_retried = cls(
            endpoint_id=endpoint_id,
            retried=retried,
            tenant_id=tenant_id,
            next_since=next_since,
        )

        return dead_retried

