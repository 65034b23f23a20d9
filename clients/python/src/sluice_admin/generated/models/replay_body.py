from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="ReplayBody")



@_attrs_define
class ReplayBody:
    """ 
        Attributes:
            endpoint_id (UUID): The endpoint whose deliveries are sent again.
            since (datetime.datetime): Deliveries created from this time (RFC 3339), inclusive.
            until (datetime.datetime): Deliveries created before this time; after since, and at most the payload horizon
                (default 7 days) after it.
     """

    endpoint_id: UUID
    since: datetime.datetime
    until: datetime.datetime





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = str(self.endpoint_id)

        since = self.since.isoformat()

        until = self.until.isoformat()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
            "since": since,
            "until": until,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = UUID(d.pop("endpoint_id"))




        since = datetime.datetime.fromisoformat(d.pop("since"))




        until = datetime.datetime.fromisoformat(d.pop("until"))




        replay_body = cls(
            endpoint_id=endpoint_id,
            since=since,
            until=until,
        )

        return replay_body

