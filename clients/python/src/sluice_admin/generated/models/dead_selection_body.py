from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.dead_selection_body_error_class import DeadSelectionBodyErrorClass
from ..types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime






T = TypeVar("T", bound="DeadSelectionBody")



@_attrs_define
class DeadSelectionBody:
    """ 
        Attributes:
            endpoint_id (UUID): The endpoint whose dead deliveries are sent again.
            since (datetime.datetime): Deliveries created from this time (RFC 3339), inclusive.
            until (datetime.datetime): Deliveries created before this time; after since, and at most the payload horizon
                (default 7 days) after it.
            error_class (DeadSelectionBodyErrorClass | Unset): Only deliveries whose last failed request failed so; absent:
                any.
            event_type (str | Unset): Only deliveries of these event types: an exact type, a prefix ending in .*
                (stripe.invoice.*), or *; absent: any.
     """

    endpoint_id: UUID
    since: datetime.datetime
    until: datetime.datetime
    error_class: DeadSelectionBodyErrorClass | Unset = UNSET
    event_type: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        endpoint_id = str(self.endpoint_id)

        since = self.since.isoformat()

        until = self.until.isoformat()

        error_class: str | Unset = UNSET
        if not isinstance(self.error_class, Unset):
            error_class = self.error_class.value


        event_type = self.event_type


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "endpoint_id": endpoint_id,
            "since": since,
            "until": until,
        })
        if error_class is not UNSET:
            field_dict["error_class"] = error_class
        if event_type is not UNSET:
            field_dict["event_type"] = event_type

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        endpoint_id = UUID(d.pop("endpoint_id"))




        since = datetime.datetime.fromisoformat(d.pop("since"))




        until = datetime.datetime.fromisoformat(d.pop("until"))




        _error_class = d.pop("error_class", UNSET)
        error_class: DeadSelectionBodyErrorClass | Unset
        if isinstance(_error_class,  Unset):
            error_class = UNSET
        else:
            error_class = DeadSelectionBodyErrorClass(_error_class)




        event_type = d.pop("event_type", UNSET)

        dead_selection_body = cls(
            endpoint_id=endpoint_id,
            since=since,
            until=until,
            error_class=error_class,
            event_type=event_type,
        )

        return dead_selection_body

