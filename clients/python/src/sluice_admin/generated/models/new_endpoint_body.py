from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.new_endpoint_body_kind import NewEndpointBodyKind
from ..types import UNSET, Unset
from typing import cast

if TYPE_CHECKING:
  from ..models.new_endpoint_body_headers import NewEndpointBodyHeaders
  from ..models.new_endpoint_body_transformation_sample import NewEndpointBodyTransformationSample
  from ..models.target_credentials import TargetCredentials
  from ..models.target_settings import TargetSettings





T = TypeVar("T", bound="NewEndpointBody")



@_attrs_define
class NewEndpointBody:
    """ 
        Attributes:
            filters (list[str]): The event types delivered (repeats are dropped).
            url (str): Where events are sent: for kind http an https URL they are POSTed to (http only where the deployment
                allows it); for rabbitmq amqps://host[:port][/vhost]; for kafka kafka://seed-broker:port; for sqs the queue's
                URL, https://sqs.region.amazonaws.com/account/queue (amqp://, kafka:// without TLS and http:// only where plain
                http is allowed). No user info (credentials are given apart, sealed), no fragment; private and loopback
                addresses are refused (422).
            concurrency (int | Unset): Requests in flight (at most the deployment's cap); absent or 0: the deployment's
                default.
            credentials (TargetCredentials | Unset):
            description (str | Unset): For people (at most 500 characters).
            expression (str | Unset): A CEL expression over the event (id, type, source, subject, time, tenant_id,
                source_account, body, data): of the events its filters take, the endpoint takes those it yields true for.
                Checked now: one that does not compile or yields no bool is refused (422) with where and why. Absent: every
                event of its filters.
            headers (NewEndpointBodyHeaders | Unset): Static headers sent on every request (sealed, never shown again: reads
                list their names). At most 20, names and values 4 KiB in all; names are HTTP tokens; webhook-*, ce-*, content-
                type, content-length, host, traceparent, tracestate, user-agent and hop-by-hop headers are Sluice's (422).
                Authorization is allowed.
            kind (NewEndpointBodyKind | Unset): What events are sent to: http (a signed POST), rabbitmq (a persistent
                message published to an exchange, confirmed by the server), kafka (a record produced to a topic of the tenant's
                cluster, keyed by resource), sqs (a message sent to an SQS-compatible queue; on a .fifo queue grouped by
                resource and deduplicated on the webhook-id). It never changes. Default: NewEndpointBodyKind.HTTP.
            ordered (bool | Unset): Deliver in order per resource (default true); false sends in parallel.
            rate_per_second (int | Unset): Requests per second (at most the deployment's cap); absent or 0: the deployment's
                default.
            settings (TargetSettings | Unset):
            transformation (str | Unset): A CEL expression over the event (the variables of expression) yielding a map: the
                JSON object sent, and signed, in place of the event's body, e.g. {"id": data.object.id, "amount":
                data.object.amount_paid, "kind": type}. Checked now (one that does not compile or yields no map is refused, 422)
                and tried on transformation_sample, or else on the tenant's last event of a type the endpoint takes: one that
                fails there is refused (422) with its reason. At most 256 KiB of output, and the filters' cost limit. Absent:
                the body as received.
            transformation_sample (NewEndpointBodyTransformationSample | Unset): An event body (a JSON object) to try the
                transformation on, its envelope id sample, type the first filter, tenant_id the tenant's. Absent: the tenant's
                last event of a type the endpoint takes, if any.
     """

    filters: list[str]
    url: str
    concurrency: int | Unset = UNSET
    credentials: TargetCredentials | Unset = UNSET
    description: str | Unset = UNSET
    expression: str | Unset = UNSET
    headers: NewEndpointBodyHeaders | Unset = UNSET
    kind: NewEndpointBodyKind | Unset = NewEndpointBodyKind.HTTP
    ordered: bool | Unset = UNSET
    rate_per_second: int | Unset = UNSET
    settings: TargetSettings | Unset = UNSET
    transformation: str | Unset = UNSET
    transformation_sample: NewEndpointBodyTransformationSample | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.new_endpoint_body_headers import NewEndpointBodyHeaders # noqa: PLC0415
        from ..models.new_endpoint_body_transformation_sample import NewEndpointBodyTransformationSample # noqa: PLC0415
        from ..models.target_credentials import TargetCredentials # noqa: PLC0415
        from ..models.target_settings import TargetSettings # noqa: PLC0415
        filters = self.filters



        url = self.url

        concurrency = self.concurrency

        credentials: dict[str, Any] | Unset = UNSET
        if not isinstance(self.credentials, Unset):
            credentials = self.credentials.to_dict()

        description = self.description

        expression = self.expression

        headers: dict[str, Any] | Unset = UNSET
        if not isinstance(self.headers, Unset):
            headers = self.headers.to_dict()

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value


        ordered = self.ordered

        rate_per_second = self.rate_per_second

        settings: dict[str, Any] | Unset = UNSET
        if not isinstance(self.settings, Unset):
            settings = self.settings.to_dict()

        transformation = self.transformation

        transformation_sample: dict[str, Any] | Unset = UNSET
        if not isinstance(self.transformation_sample, Unset):
            transformation_sample = self.transformation_sample.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "filters": filters,
            "url": url,
        })
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if credentials is not UNSET:
            field_dict["credentials"] = credentials
        if description is not UNSET:
            field_dict["description"] = description
        if expression is not UNSET:
            field_dict["expression"] = expression
        if headers is not UNSET:
            field_dict["headers"] = headers
        if kind is not UNSET:
            field_dict["kind"] = kind
        if ordered is not UNSET:
            field_dict["ordered"] = ordered
        if rate_per_second is not UNSET:
            field_dict["rate_per_second"] = rate_per_second
        if settings is not UNSET:
            field_dict["settings"] = settings
        if transformation is not UNSET:
            field_dict["transformation"] = transformation
        if transformation_sample is not UNSET:
            field_dict["transformation_sample"] = transformation_sample

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_endpoint_body_headers import NewEndpointBodyHeaders # noqa: PLC0415
        from ..models.new_endpoint_body_transformation_sample import NewEndpointBodyTransformationSample # noqa: PLC0415
        from ..models.target_credentials import TargetCredentials # noqa: PLC0415
        from ..models.target_settings import TargetSettings # noqa: PLC0415
        d = dict(src_dict)
        filters = cast(list[str], d.pop("filters"))


        url = d.pop("url")

        concurrency = d.pop("concurrency", UNSET)

        _credentials = d.pop("credentials", UNSET)
        credentials: TargetCredentials | Unset
        if isinstance(_credentials,  Unset):
            credentials = UNSET
        else:
            credentials = TargetCredentials.from_dict(_credentials)




        description = d.pop("description", UNSET)

        expression = d.pop("expression", UNSET)

        _headers = d.pop("headers", UNSET)
        headers: NewEndpointBodyHeaders | Unset
        if isinstance(_headers,  Unset):
            headers = UNSET
        else:
            headers = NewEndpointBodyHeaders.from_dict(_headers)




        _kind = d.pop("kind", UNSET)
        kind: NewEndpointBodyKind | Unset
        if isinstance(_kind,  Unset):
            kind = UNSET
        else:
            kind = NewEndpointBodyKind(_kind)




        ordered = d.pop("ordered", UNSET)

        rate_per_second = d.pop("rate_per_second", UNSET)

        _settings = d.pop("settings", UNSET)
        settings: TargetSettings | Unset
        if isinstance(_settings,  Unset):
            settings = UNSET
        else:
            settings = TargetSettings.from_dict(_settings)




        transformation = d.pop("transformation", UNSET)

        _transformation_sample = d.pop("transformation_sample", UNSET)
        transformation_sample: NewEndpointBodyTransformationSample | Unset
        if isinstance(_transformation_sample,  Unset):
            transformation_sample = UNSET
        else:
            transformation_sample = NewEndpointBodyTransformationSample.from_dict(_transformation_sample)




        new_endpoint_body = cls(
            filters=filters,
            url=url,
            concurrency=concurrency,
            credentials=credentials,
            description=description,
            expression=expression,
            headers=headers,
            kind=kind,
            ordered=ordered,
            rate_per_second=rate_per_second,
            settings=settings,
            transformation=transformation,
            transformation_sample=transformation_sample,
        )

        return new_endpoint_body

