from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Stats")



@_attrs_define
class Stats:
    """ 
        Attributes:
            dead (int): Given up after the retry horizon, of the newest window deliveries.
            delivered (int): Delivered (a 2xx), of the newest window deliveries.
            oldest_pending_age_seconds (float): Age of the oldest undelivered delivery; 0 when none waits.
            pending (int): Deliveries waiting to be sent or retried (counted up to 10,000).
            pending_at_least (bool): true: there are more than pending; pending and oldest_pending_age_seconds are lower
                bounds.
            window (int): How many of the endpoint's newest deliveries delivered and dead were counted in (at most 10,000).
            last_attempt_at (datetime.datetime | Unset): The latest request to the endpoint, successful or not (of the
                deliveries read).
            last_error (str | Unset): The latest failed attempt's error (class: detail).
            last_error_at (datetime.datetime | Unset):
            last_error_status (int | Unset): The HTTP status of the latest failed attempt; absent when no answer came.
     """

    dead: int
    delivered: int
    oldest_pending_age_seconds: float
    pending: int
    pending_at_least: bool
    window: int
    last_attempt_at: datetime.datetime | Unset = UNSET
    last_error: str | Unset = UNSET
    last_error_at: datetime.datetime | Unset = UNSET
    last_error_status: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        dead = self.dead

        delivered = self.delivered

        oldest_pending_age_seconds = self.oldest_pending_age_seconds

        pending = self.pending

        pending_at_least = self.pending_at_least

        window = self.window

        last_attempt_at: str | Unset = UNSET
        if not isinstance(self.last_attempt_at, Unset):
            last_attempt_at = self.last_attempt_at.isoformat()

        last_error = self.last_error

        last_error_at: str | Unset = UNSET
        if not isinstance(self.last_error_at, Unset):
            last_error_at = self.last_error_at.isoformat()

        last_error_status = self.last_error_status


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "dead": dead,
            "delivered": delivered,
            "oldest_pending_age_seconds": oldest_pending_age_seconds,
            "pending": pending,
            "pending_at_least": pending_at_least,
            "window": window,
        })
        if last_attempt_at is not UNSET:
            field_dict["last_attempt_at"] = last_attempt_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_error_at is not UNSET:
            field_dict["last_error_at"] = last_error_at
        if last_error_status is not UNSET:
            field_dict["last_error_status"] = last_error_status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        dead = d.pop("dead")

        delivered = d.pop("delivered")

        oldest_pending_age_seconds = d.pop("oldest_pending_age_seconds")

        pending = d.pop("pending")

        pending_at_least = d.pop("pending_at_least")

        window = d.pop("window")

        _last_attempt_at = d.pop("last_attempt_at", UNSET)
        last_attempt_at: datetime.datetime | Unset
        if isinstance(_last_attempt_at,  Unset):
            last_attempt_at = UNSET
        else:
            last_attempt_at = datetime.datetime.fromisoformat(_last_attempt_at)




        last_error = d.pop("last_error", UNSET)

        _last_error_at = d.pop("last_error_at", UNSET)
        last_error_at: datetime.datetime | Unset
        if isinstance(_last_error_at,  Unset):
            last_error_at = UNSET
        else:
            last_error_at = datetime.datetime.fromisoformat(_last_error_at)




        last_error_status = d.pop("last_error_status", UNSET)

        stats = cls(
            dead=dead,
            delivered=delivered,
            oldest_pending_age_seconds=oldest_pending_age_seconds,
            pending=pending,
            pending_at_least=pending_at_least,
            window=window,
            last_attempt_at=last_attempt_at,
            last_error=last_error,
            last_error_at=last_error_at,
            last_error_status=last_error_status,
        )

        return stats

