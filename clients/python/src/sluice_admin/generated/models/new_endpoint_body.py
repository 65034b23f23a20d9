from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.new_endpoint_body_headers import NewEndpointBodyHeaders





T = TypeVar("T", bound="NewEndpointBody")



@_attrs_define
class NewEndpointBody:
    """ 
        Attributes:
            filters (list[str]): The event types delivered (repeats are dropped).
            url (str): Where events are POSTed: https (http only where the deployment allows it), no user info, no fragment;
                private and loopback addresses are refused (422).
            concurrency (int | Unset): Requests in flight (at most the deployment's cap); absent or 0: the deployment's
                default.
            description (str | Unset): For people (at most 500 characters).
            expression (str | Unset): A CEL expression over the event (id, type, source, subject, time, tenant_id,
                source_account, body, data): of the events its filters take, the endpoint takes those it yields true for.
                Checked now: one that does not compile or yields no bool is refused (422) with where and why. Absent: every
                event of its filters.
            headers (NewEndpointBodyHeaders | Unset): Static headers sent on every request (sealed, never shown again: reads
                list their names). At most 20, names and values 4 KiB in all; names are HTTP tokens; webhook-*, ce-*, content-
                type, content-length, host, traceparent, tracestate, user-agent and hop-by-hop headers are Sluice's (422).
                Authorization is allowed.
            ordered (bool | Unset): Deliver in order per resource (default true); false sends in parallel.
            rate_per_second (int | Unset): Requests per second (at most the deployment's cap); absent or 0: the deployment's
                default.
     """

    filters: list[str]
    url: str
    concurrency: int | Unset = UNSET
    description: str | Unset = UNSET
    expression: str | Unset = UNSET
    headers: NewEndpointBodyHeaders | Unset = UNSET
    ordered: bool | Unset = UNSET
    rate_per_second: int | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.new_endpoint_body_headers import NewEndpointBodyHeaders # noqa: PLC0415
        filters = self.filters



        url = self.url

        concurrency = self.concurrency

        description = self.description

        expression = self.expression

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        ordered = self.ordered

        rate_per_second = self.rate_per_second


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "filters": filters,
            "url": url,
        })
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if description is not UNSET:
            field_dict["description"] = description
        if expression is not UNSET:
            field_dict["expression"] = expression
        if headers is not UNSET:
            field_dict["headers"] = headers
        if ordered is not UNSET:
            field_dict["ordered"] = ordered
        if rate_per_second is not UNSET:
            field_dict["rate_per_second"] = rate_per_second

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_endpoint_body_headers import NewEndpointBodyHeaders # noqa: PLC0415
        d = dict(src_dict)
        filters = cast(list[str], d.pop("filters"))


        url = d.pop("url")

        concurrency = d.pop("concurrency", UNSET)

        description = d.pop("description", UNSET)

        expression = d.pop("expression", UNSET)

        _headers = d.pop("headers", UNSET)
        headers: NewEndpointBodyHeaders | Unset
        if isinstance(_headers,  Unset):
            headers = UNSET
        else:
            headers = NewEndpointBodyHeaders.from_dict(_headers)




        ordered = d.pop("ordered", UNSET)

        rate_per_second = d.pop("rate_per_second", UNSET)

        new_endpoint_body = cls(
            filters=filters,
            url=url,
            concurrency=concurrency,
            description=description,
            expression=expression,
            headers=headers,
            ordered=ordered,
            rate_per_second=rate_per_second,
        )

        return new_endpoint_body

