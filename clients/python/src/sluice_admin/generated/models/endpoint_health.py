from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.hour_figures import HourFigures





T = TypeVar("T", bound="EndpointHealth")



@_attrs_define
class EndpointHealth:
    """ 
        Attributes:
            attempts (int): Requests to the endpoint since since.
            delivered (int): Of them, answered 2xx.
            failed (int):
            hours (list[HourFigures] | None):
            since (datetime.datetime):
            latency_p50_ms (float | Unset): Median latency of the answered attempts, estimated from buckets.
            latency_p99_ms (float | Unset): 99th percentile latency of the answered attempts, estimated from buckets.
            success_rate (float | Unset): Delivered / attempts; absent without attempts.
     """

    attempts: int
    delivered: int
    failed: int
    hours: list[HourFigures] | None
    since: datetime.datetime
    latency_p50_ms: float | Unset = UNSET
    latency_p99_ms: float | Unset = UNSET
    success_rate: float | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.hour_figures import HourFigures # noqa: PLC0415
        attempts = self.attempts

        delivered = self.delivered

        failed = self.failed

        hours: list[dict[str, Any]] | None
        if isinstance(self.hours, list):
            hours = []
            for hours_type_0_item_data in self.hours:
                hours_type_0_item = hours_type_0_item_data.to_dict()
                hours.append(hours_type_0_item)


        else:
            hours = self.hours

        since = self.since.isoformat()

        latency_p50_ms = self.latency_p50_ms

        latency_p99_ms = self.latency_p99_ms

        success_rate = self.success_rate


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "attempts": attempts,
            "delivered": delivered,
            "failed": failed,
            "hours": hours,
            "since": since,
        })
        if latency_p50_ms is not UNSET:
            field_dict["latency_p50_ms"] = latency_p50_ms
        if latency_p99_ms is not UNSET:
            field_dict["latency_p99_ms"] = latency_p99_ms
        if success_rate is not UNSET:
            field_dict["success_rate"] = success_rate

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.hour_figures import HourFigures # noqa: PLC0415
        d = dict(src_dict)
        attempts = d.pop("attempts")

        delivered = d.pop("delivered")

        failed = d.pop("failed")

        def _parse_hours(data: object) -> list[HourFigures] | None:
            if data is None:
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                hours_type_0 = []
                _hours_type_0 = data
                for hours_type_0_item_data in (_hours_type_0):
                    hours_type_0_item = HourFigures.from_dict(hours_type_0_item_data)



                    hours_type_0.append(hours_type_0_item)

                return hours_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[HourFigures] | None, data)

        hours = _parse_hours(d.pop("hours"))


        since = datetime.datetime.fromisoformat(d.pop("since"))




        latency_p50_ms = d.pop("latency_p50_ms", UNSET)

        latency_p99_ms = d.pop("latency_p99_ms", UNSET)

        success_rate = d.pop("success_rate", UNSET)

        endpoint_health = cls(
            attempts=attempts,
            delivered=delivered,
            failed=failed,
            hours=hours,
            since=since,
            latency_p50_ms=latency_p50_ms,
            latency_p99_ms=latency_p99_ms,
            success_rate=success_rate,
        )

        return endpoint_health

