from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.endpoint_delivery_state import EndpointDeliveryState
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.attempt import Attempt





T = TypeVar("T", bound="EndpointDelivery")



@_attrs_define
class EndpointDelivery:
    """ 
        Attributes:
            attempts (int): Requests made so far.
            created_at (datetime.datetime):
            endpoint_id (str):
            event_id (str):
            event_type (str):
            id (int):
            offset (int):
            partition (int):
            partition_key (str): The resource key: an ordered endpoint gets a key's deliveries in order.
            state (EndpointDeliveryState):
            tenant_id (str):
            topic (str): The Kafka record the fan-out read the event from: where the relay published it.
            webhook_id (str): The webhook-id header: the same on every retry, replay and rewind.
            accepted_at (datetime.datetime | Unset): When ingest accepted the event.
            delivered_at (datetime.datetime | Unset):
            history (list[Attempt] | None | Unset): Every request, oldest first: the failed ones, and for a delivered
                delivery its successful one (one delivery's view only).
            inbox_id (int | Unset): The event's inbox id (its trail); absent for events with no inbox row (the built-in
                intents, test events).
            last_error (str | Unset):
            last_status (int | Unset): The endpoint's HTTP status on the latest request; absent when none answered.
            latency_ms (int | Unset): The latest request's latency.
            next_at (datetime.datetime | Unset): When the next request is due (pending only).
            rules_version (int | Unset): The version of the endpoint's rules (filter expression and transformation) the
                delivery was created under: its filter took the event then. Absent for deliveries written before versions.
            sent_rules_version (int | Unset): The version of the endpoint's rules whose transformation the latest request
                used (a retry or a replay sends with the rules current then). Absent until a request is made.
     """

    attempts: int
    created_at: datetime.datetime
    endpoint_id: str
    event_id: str
    event_type: str
    id: int
    offset: int
    partition: int
    partition_key: str
    state: EndpointDeliveryState
    tenant_id: str
    topic: str
    webhook_id: str
    accepted_at: datetime.datetime | Unset = UNSET
    delivered_at: datetime.datetime | Unset = UNSET
    history: list[Attempt] | None | Unset = UNSET
    inbox_id: int | Unset = UNSET
    last_error: str | Unset = UNSET
    last_status: int | Unset = UNSET
    latency_ms: int | Unset = UNSET
    next_at: datetime.datetime | Unset = UNSET
    rules_version: int | Unset = UNSET
    sent_rules_version: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.attempt import Attempt # noqa: PLC0415
        attempts = self.attempts

        created_at = self.created_at.isoformat()

        endpoint_id = self.endpoint_id

        event_id = self.event_id

        event_type = self.event_type

        id = self.id

        offset = self.offset

        partition = self.partition

        partition_key = self.partition_key

        state = self.state.value

        tenant_id = self.tenant_id

        topic = self.topic

        webhook_id = self.webhook_id

        accepted_at: str | Unset = UNSET
        if not isinstance(self.accepted_at, Unset):
            accepted_at = self.accepted_at.isoformat()

        delivered_at: str | Unset = UNSET
        if not isinstance(self.delivered_at, Unset):
            delivered_at = self.delivered_at.isoformat()

        history: list[dict[str, Any]] | None | Unset
        if isinstance(self.history, Unset):
            history = UNSET
        elif isinstance(self.history, list):
            history = []
            for history_type_0_item_data in self.history:
                history_type_0_item = history_type_0_item_data.to_dict()
                history.append(history_type_0_item)


        else:
            history = self.history

        inbox_id = self.inbox_id

        last_error = self.last_error

        last_status = self.last_status

        latency_ms = self.latency_ms

        next_at: str | Unset = UNSET
        if not isinstance(self.next_at, Unset):
            next_at = self.next_at.isoformat()

        rules_version = self.rules_version

        sent_rules_version = self.sent_rules_version


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "attempts": attempts,
            "created_at": created_at,
            "endpoint_id": endpoint_id,
            "event_id": event_id,
            "event_type": event_type,
            "id": id,
            "offset": offset,
            "partition": partition,
            "partition_key": partition_key,
            "state": state,
            "tenant_id": tenant_id,
            "topic": topic,
            "webhook_id": webhook_id,
        })
        if accepted_at is not UNSET:
            field_dict["accepted_at"] = accepted_at
        if delivered_at is not UNSET:
            field_dict["delivered_at"] = delivered_at
        if history is not UNSET:
            field_dict["history"] = history
        if inbox_id is not UNSET:
            field_dict["inbox_id"] = inbox_id
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_status is not UNSET:
            field_dict["last_status"] = last_status
        if latency_ms is not UNSET:
            field_dict["latency_ms"] = latency_ms
        if next_at is not UNSET:
            field_dict["next_at"] = next_at
        if rules_version is not UNSET:
            field_dict["rules_version"] = rules_version
        if sent_rules_version is not UNSET:
            field_dict["sent_rules_version"] = sent_rules_version

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt # noqa: PLC0415
        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        endpoint_id = d.pop("endpoint_id")

        event_id = d.pop("event_id")

        event_type = d.pop("event_type")

        id = d.pop("id")

        offset = d.pop("offset")

        partition = d.pop("partition")

        partition_key = d.pop("partition_key")

        state = EndpointDeliveryState(d.pop("state"))




        tenant_id = d.pop("tenant_id")

        topic = d.pop("topic")

        webhook_id = d.pop("webhook_id")

        _accepted_at = d.pop("accepted_at", UNSET)
        accepted_at: datetime.datetime | Unset
        if isinstance(_accepted_at,  Unset):
            accepted_at = UNSET
        else:
            accepted_at = datetime.datetime.fromisoformat(_accepted_at)




        _delivered_at = d.pop("delivered_at", UNSET)
        delivered_at: datetime.datetime | Unset
        if isinstance(_delivered_at,  Unset):
            delivered_at = UNSET
        else:
            delivered_at = datetime.datetime.fromisoformat(_delivered_at)




        def _parse_history(data: object) -> list[Attempt] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                history_type_0 = []
                _history_type_0 = data
                for history_type_0_item_data in (_history_type_0):
                    history_type_0_item = Attempt.from_dict(history_type_0_item_data)



                    history_type_0.append(history_type_0_item)

                return history_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[Attempt] | None | Unset, data)

        history = _parse_history(d.pop("history", UNSET))


        inbox_id = d.pop("inbox_id", UNSET)

        last_error = d.pop("last_error", UNSET)

        last_status = d.pop("last_status", UNSET)

        latency_ms = d.pop("latency_ms", UNSET)

        _next_at = d.pop("next_at", UNSET)
        next_at: datetime.datetime | Unset
        if isinstance(_next_at,  Unset):
            next_at = UNSET
        else:
            next_at = datetime.datetime.fromisoformat(_next_at)




        rules_version = d.pop("rules_version", UNSET)

        sent_rules_version = d.pop("sent_rules_version", UNSET)

        endpoint_delivery = cls(
            attempts=attempts,
            created_at=created_at,
            endpoint_id=endpoint_id,
            event_id=event_id,
            event_type=event_type,
            id=id,
            offset=offset,
            partition=partition,
            partition_key=partition_key,
            state=state,
            tenant_id=tenant_id,
            topic=topic,
            webhook_id=webhook_id,
            accepted_at=accepted_at,
            delivered_at=delivered_at,
            history=history,
            inbox_id=inbox_id,
            last_error=last_error,
            last_status=last_status,
            latency_ms=latency_ms,
            next_at=next_at,
            rules_version=rules_version,
            sent_rules_version=sent_rules_version,
        )

        return endpoint_delivery

