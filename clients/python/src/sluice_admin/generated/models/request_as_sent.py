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
  from ..models.sent_header import SentHeader





T = TypeVar("T", bound="RequestAsSent")



@_attrs_define
class RequestAsSent:
    """ 
        Attributes:
            body_kept (bool): False once the event's body is gone (past the payload horizon, or erased): no request can send
                it again.
            headers (list[SentHeader]): Every header sent: the endpoint's static headers (values masked), Content-Type,
                User-Agent, the Standard Webhooks headers (each signature masked) and the CloudEvents attributes; an endpoint's
                own headers never replace Sluice's.
            method (str): POST for an http endpoint; empty for rabbitmq and kafka targets, which get a message or a record
                with the same headers.
            url (str): The endpoint's URL now (or its target, for rabbitmq and kafka); a request made before the URL was
                changed went to the one of its time.
            at (datetime.datetime | Unset): The latest request's time, which its webhook-timestamp and signatures carry;
                absent before the first request.
            body (str | Unset): The body exactly as sent: the event as received.
     """

    body_kept: bool
    headers: list[SentHeader]
    method: str
    url: str
    at: datetime.datetime | Unset = UNSET
    body: str | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.sent_header import SentHeader # noqa: PLC0415
        body_kept = self.body_kept

        headers = []
        for headers_item_data in self.headers:
            headers_item = headers_item_data.to_dict()
            headers.append(headers_item)



        method = self.method

        url = self.url

        at: str | Unset = UNSET
        if not isinstance(self.at, Unset):
            at = self.at.isoformat()

        body = self.body


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "body_kept": body_kept,
            "headers": headers,
            "method": method,
            "url": url,
        })
        if at is not UNSET:
            field_dict["at"] = at
        if body is not UNSET:
            field_dict["body"] = body

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sent_header import SentHeader # noqa: PLC0415
        d = dict(src_dict)
        body_kept = d.pop("body_kept")

        headers = []
        _headers = d.pop("headers")
        for headers_item_data in (_headers):
            headers_item = SentHeader.from_dict(headers_item_data)



            headers.append(headers_item)


        method = d.pop("method")

        url = d.pop("url")

        _at = d.pop("at", UNSET)
        at: datetime.datetime | Unset
        if isinstance(_at,  Unset):
            at = UNSET
        else:
            at = datetime.datetime.fromisoformat(_at)




        body = d.pop("body", UNSET)

        request_as_sent = cls(
            body_kept=body_kept,
            headers=headers,
            method=method,
            url=url,
            at=at,
            body=body,
        )

        return request_as_sent

