from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.endpoint_disabled_reason import EndpointDisabledReason
from ..models.endpoint_kind import EndpointKind
from ..types import UNSET, Unset
from typing import cast
import datetime

if TYPE_CHECKING:
  from ..models.target_settings import TargetSettings
  from ..models.trial import Trial





T = TypeVar("T", bound="Endpoint")



@_attrs_define
class Endpoint:
    """ 
        Attributes:
            active_secrets (int): Secrets signing every request now (several during a rotation's overlap).
            created_at (datetime.datetime):
            description (str):
            enabled (bool):
            filters (list[str]): Event types delivered: exact names, prefixes ending in .* (stripe.invoice.*), or *.
            has_credentials (bool): true: the target is authenticated with credentials, sealed and never shown.
            headers (list[str]): Names of the static headers sent on every request (their values are never shown).
            id (str): Endpoint id.
            kind (EndpointKind): What the events are sent to: http (a signed POST), rabbitmq (a message published to an
                exchange, confirmed), kafka (a record produced to a topic of the tenant's cluster) or sqs (a message sent to an
                SQS-compatible queue).
            ordered (bool): true: an event waits until every earlier one of its resource is delivered (or given up).
            paused (bool): true: its deliveries are written but none is sent until it is resumed.
            rules_version (int): The version of the endpoint's rules, its expression and its transformation together: 1 at
                creation, the next at every change of either.
            tenant_id (str):
            updated_at (datetime.datetime):
            url (str): Where the tenant's matching events are sent: an https URL they are POSTed to, an amqps:// server
                (rabbitmq) or a kafka:// seed broker (kafka).
            concurrency (int | Unset): Requests in flight; absent: the deployment's default.
            disabled_at (datetime.datetime | Unset):
            disabled_reason (EndpointDisabledReason | Unset): Why it is disabled: operator, gone (it answered 410) or
                failing (every attempt failed for the failing horizon).
            expression (str | Unset): A CEL expression over the event (id, type, source, subject, time, tenant_id,
                source_account, body, data): of the events its filters name, the endpoint takes those it yields true for.
                Absent: all of them.
            failing_since (datetime.datetime | Unset): The first failure of the current streak; absent once an attempt
                succeeds.
            paused_at (datetime.datetime | Unset):
            rate_per_second (int | Unset): Requests per second; absent: the deployment's default.
            settings (TargetSettings | Unset):
            transformation (str | Unset): A CEL expression over the event yielding a map: the JSON object sent (and signed)
                in place of the event's body. Absent: the body as received.
            transformation_trial (Trial | Unset):
     """

    active_secrets: int
    created_at: datetime.datetime
    description: str
    enabled: bool
    filters: list[str]
    has_credentials: bool
    headers: list[str]
    id: str
    kind: EndpointKind
    ordered: bool
    paused: bool
    rules_version: int
    tenant_id: str
    updated_at: datetime.datetime
    url: str
    concurrency: int | Unset = UNSET
    disabled_at: datetime.datetime | Unset = UNSET
    disabled_reason: EndpointDisabledReason | Unset = UNSET
    expression: str | Unset = UNSET
    failing_since: datetime.datetime | Unset = UNSET
    paused_at: datetime.datetime | Unset = UNSET
    rate_per_second: int | Unset = UNSET
    settings: TargetSettings | Unset = UNSET
    transformation: str | Unset = UNSET
    transformation_trial: Trial | Unset = UNSET





    def to_dict(self) -> dict[str, Any]:
        from ..models.target_settings import TargetSettings # noqa: PLC0415
        from ..models.trial import Trial # noqa: PLC0415
        active_secrets = self.active_secrets

        created_at = self.created_at.isoformat()

        description = self.description

        enabled = self.enabled

        filters = self.filters



        has_credentials = self.has_credentials

        headers = self.headers



        id = self.id

        kind = self.kind.value

        ordered = self.ordered

        paused = self.paused

        rules_version = self.rules_version

        tenant_id = self.tenant_id

        updated_at = self.updated_at.isoformat()

        url = self.url

        concurrency = self.concurrency

        disabled_at: str | Unset = UNSET
        if not isinstance(self.disabled_at, Unset):
            disabled_at = self.disabled_at.isoformat()

        disabled_reason: str | Unset = UNSET
        if not isinstance(self.disabled_reason, Unset):
            disabled_reason = self.disabled_reason.value


        expression = self.expression

        failing_since: str | Unset = UNSET
        if not isinstance(self.failing_since, Unset):
            failing_since = self.failing_since.isoformat()

        paused_at: str | Unset = UNSET
        if not isinstance(self.paused_at, Unset):
            paused_at = self.paused_at.isoformat()

        rate_per_second = self.rate_per_second

        settings: dict[str, Any] | Unset = UNSET
        if not isinstance(self.settings, Unset):
            settings = self.settings.to_dict()

        transformation = self.transformation

        transformation_trial: dict[str, Any] | Unset = UNSET
        if not isinstance(self.transformation_trial, Unset):
            transformation_trial = self.transformation_trial.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "active_secrets": active_secrets,
            "created_at": created_at,
            "description": description,
            "enabled": enabled,
            "filters": filters,
            "has_credentials": has_credentials,
            "headers": headers,
            "id": id,
            "kind": kind,
            "ordered": ordered,
            "paused": paused,
            "rules_version": rules_version,
            "tenant_id": tenant_id,
            "updated_at": updated_at,
            "url": url,
        })
        if concurrency is not UNSET:
            field_dict["concurrency"] = concurrency
        if disabled_at is not UNSET:
            field_dict["disabled_at"] = disabled_at
        if disabled_reason is not UNSET:
            field_dict["disabled_reason"] = disabled_reason
        if expression is not UNSET:
            field_dict["expression"] = expression
        if failing_since is not UNSET:
            field_dict["failing_since"] = failing_since
        if paused_at is not UNSET:
            field_dict["paused_at"] = paused_at
        if rate_per_second is not UNSET:
            field_dict["rate_per_second"] = rate_per_second
        if settings is not UNSET:
            field_dict["settings"] = settings
        if transformation is not UNSET:
            field_dict["transformation"] = transformation
        if transformation_trial is not UNSET:
            field_dict["transformation_trial"] = transformation_trial

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.target_settings import TargetSettings # noqa: PLC0415
        from ..models.trial import Trial # noqa: PLC0415
        d = dict(src_dict)
        active_secrets = d.pop("active_secrets")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))




        description = d.pop("description")

        enabled = d.pop("enabled")

        filters = cast(list[str], d.pop("filters"))


        has_credentials = d.pop("has_credentials")

        headers = cast(list[str], d.pop("headers"))


        id = d.pop("id")

        kind = EndpointKind(d.pop("kind"))




        ordered = d.pop("ordered")

        paused = d.pop("paused")

        rules_version = d.pop("rules_version")

        tenant_id = d.pop("tenant_id")

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))




        url = d.pop("url")

        concurrency = d.pop("concurrency", UNSET)

        _disabled_at = d.pop("disabled_at", UNSET)
        disabled_at: datetime.datetime | Unset
        if isinstance(_disabled_at,  Unset):
            disabled_at = UNSET
        else:
            disabled_at = datetime.datetime.fromisoformat(_disabled_at)




        _disabled_reason = d.pop("disabled_reason", UNSET)
        disabled_reason: EndpointDisabledReason | Unset
        if isinstance(_disabled_reason,  Unset):
            disabled_reason = UNSET
        else:
            disabled_reason = EndpointDisabledReason(_disabled_reason)




        expression = d.pop("expression", UNSET)

        _failing_since = d.pop("failing_since", UNSET)
        failing_since: datetime.datetime | Unset
        if isinstance(_failing_since,  Unset):
            failing_since = UNSET
        else:
            failing_since = datetime.datetime.fromisoformat(_failing_since)




        _paused_at = d.pop("paused_at", UNSET)
        paused_at: datetime.datetime | Unset
        if isinstance(_paused_at,  Unset):
            paused_at = UNSET
        else:
            paused_at = datetime.datetime.fromisoformat(_paused_at)




        rate_per_second = d.pop("rate_per_second", UNSET)

        _settings = d.pop("settings", UNSET)
        settings: TargetSettings | Unset
        if isinstance(_settings,  Unset):
            settings = UNSET
        else:
            settings = TargetSettings.from_dict(_settings)




        transformation = d.pop("transformation", UNSET)

        _transformation_trial = d.pop("transformation_trial", UNSET)
        transformation_trial: Trial | Unset
        if isinstance(_transformation_trial,  Unset):
            transformation_trial = UNSET
        else:
            transformation_trial = Trial.from_dict(_transformation_trial)




        endpoint = cls(
            active_secrets=active_secrets,
            created_at=created_at,
            description=description,
            enabled=enabled,
            filters=filters,
            has_credentials=has_credentials,
            headers=headers,
            id=id,
            kind=kind,
            ordered=ordered,
            paused=paused,
            rules_version=rules_version,
            tenant_id=tenant_id,
            updated_at=updated_at,
            url=url,
            concurrency=concurrency,
            disabled_at=disabled_at,
            disabled_reason=disabled_reason,
            expression=expression,
            failing_since=failing_since,
            paused_at=paused_at,
            rate_per_second=rate_per_second,
            settings=settings,
            transformation=transformation,
            transformation_trial=transformation_trial,
        )

        return endpoint

