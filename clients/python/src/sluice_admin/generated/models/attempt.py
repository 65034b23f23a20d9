from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast
import datetime






T = TypeVar("T", bound="Attempt")



@_attrs_define
class Attempt:
    """ 
        Attributes:
            at (datetime.datetime):
            attempt (int): 1 for the first request of a delivery.
            latency_ms (int):
            answer (str | Unset): The first 1 KiB of the answer.
            error (str | Unset):
            error_class (str | Unset): Why it failed: status, timeout, connect, tls, dns, refused_address, ...; absent for a
                2xx.
            rules_version (int | Unset): The version of the endpoint's rules whose transformation this request used; absent
                for requests made before versions.
            status (int | Unset): The endpoint's HTTP status; absent when no HTTP answer came (and for rabbitmq and kafka
                targets, which confirm or refuse).
     """

    at: datetime.datetime
    attempt: int
    latency_ms: int
    answer: str | Unset = UNSET
    error: str | Unset = UNSET
    error_class: str | Unset = UNSET
    rules_version: int | Unset = UNSET
    status: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        attempt = self.attempt

        latency_ms = self.latency_ms

        answer = self.answer

        error = self.error

        error_class = self.error_class

        rules_version = self.rules_version

        status = self.status


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "at": at,
            "attempt": attempt,
            "latency_ms": latency_ms,
        })
        if answer is not UNSET:
            field_dict["answer"] = answer
        if error is not UNSET:
            field_dict["error"] = error
        if error_class is not UNSET:
            field_dict["error_class"] = error_class
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

        latency_ms = d.pop("latency_ms")

        answer = d.pop("answer", UNSET)

        error = d.pop("error", UNSET)

        error_class = d.pop("error_class", UNSET)

        rules_version = d.pop("rules_version", UNSET)

        status = d.pop("status", UNSET)

        attempt = cls(
            at=at,
            attempt=attempt,
            latency_ms=latency_ms,
            answer=answer,
            error=error,
            error_class=error_class,
            rules_version=rules_version,
            status=status,
        )

        return attempt

