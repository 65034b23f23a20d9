from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.endpoint_test_from import EndpointTestFrom
from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="EndpointTest")



@_attrs_define
class EndpointTest:
    """ 
        Attributes:
            at (datetime.datetime):
            attempt (int): 1 for the first request of a delivery.
            event_type (str): The event type sent (ce-type).
            from_ (EndpointTestFrom): Where the body came from: synthetic (sluice.test, no type chosen), last_event (the
                tenant's newest event of the type, masked) or schema (a minimal example its schema accepts, when the tenant has
                none).
            latency_ms (int):
            answer (str | Unset): The first 1 KiB of the answer.
            based_on (str | Unset): The id of the event the body was taken from (from last_event).
            body (str | Unset): The body sent.
            error (str | Unset):
            error_class (str | Unset): Why it failed: status, timeout, connect, tls, dns, refused_address, ...; absent for a
                2xx.
            masked (list[str] | None | Unset): JSON pointers of the string values replaced by "masked" (from last_event):
                every string except the values of type, object, status, currency, api_version, action and event; numbers,
                booleans and nulls are kept.
            rules_version (int | Unset): The version of the endpoint's rules whose transformation this request used; absent
                for requests made before versions.
            status (int | Unset): The endpoint's HTTP status; absent when no HTTP answer came (and for rabbitmq and kafka
                targets, which confirm or refuse).
     """

    at: datetime.datetime
    attempt: int
    event_type: str
    from_: EndpointTestFrom
    latency_ms: int
    answer: str | Unset = UNSET
    based_on: str | Unset = UNSET
    body: str | Unset = UNSET
    error: str | Unset = UNSET
    error_class: str | Unset = UNSET
    masked: list[str] | None | Unset = UNSET
    rules_version: int | Unset = UNSET
    status: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        attempt = self.attempt

        event_type = self.event_type

        from_ = self.from_.value

        latency_ms = self.latency_ms

        answer = self.answer

        based_on = self.based_on

        body = self.body

        error = self.error

        error_class = self.error_class

        masked: list[str] | None | Unset
        if isinstance(self.masked, Unset):
            masked = UNSET
        elif isinstance(self.masked, list):
            masked = self.masked


        else:
            masked = self.masked

        rules_version = self.rules_version

        status = self.status


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "at": at,
            "attempt": attempt,
            "event_type": event_type,
            "from": from_,
            "latency_ms": latency_ms,
        })
        if answer is not UNSET:
            field_dict["answer"] = answer
        if based_on is not UNSET:
            field_dict["based_on"] = based_on
        if body is not UNSET:
            field_dict["body"] = body
        if error is not UNSET:
            field_dict["error"] = error
        if error_class is not UNSET:
            field_dict["error_class"] = error_class
        if masked is not UNSET:
            field_dict["masked"] = masked
        if rules_version is not UNSET:
            field_dict["rules_version"] = rules_version
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))




        attempt = d.pop("attempt")

        event_type = d.pop("event_type")

        from_ = EndpointTestFrom(d.pop("from"))




        latency_ms = d.pop("latency_ms")

        answer = d.pop("answer", UNSET)

        based_on = d.pop("based_on", UNSET)

        body = d.pop("body", UNSET)

        error = d.pop("error", UNSET)

        error_class = d.pop("error_class", UNSET)

        def _parse_masked(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                masked_type_0 = cast(list[str], data)

                return masked_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        masked = _parse_masked(d.pop("masked", UNSET))


        rules_version = d.pop("rules_version", UNSET)

        status = d.pop("status", UNSET)

        endpoint_test = cls(
            at=at,
            attempt=attempt,
            event_type=event_type,
            from_=from_,
            latency_ms=latency_ms,
            answer=answer,
            based_on=based_on,
            body=body,
            error=error,
            error_class=error_class,
            masked=masked,
            rules_version=rules_version,
            status=status,
        )

        return endpoint_test

