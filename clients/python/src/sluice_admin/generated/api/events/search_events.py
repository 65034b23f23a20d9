from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_out_event_body import ListOutEventBody
from ...models.problem import Problem
from ...models.search_events_status import SearchEventsStatus
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID
import datetime



def _get_kwargs(
    *,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    source_id: UUID | Unset = UNSET,
    event_id: str | Unset = UNSET,
    event_type: str | Unset = UNSET,
    object_id: str | Unset = UNSET,
    status: SearchEventsStatus | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["cursor"] = cursor

    params["limit"] = limit

    json_since: str | Unset = UNSET
    if not isinstance(since, Unset):
        json_since = since.isoformat()
    params["since"] = json_since

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.isoformat()
    params["until"] = json_until

    json_tenant_id: str | Unset = UNSET
    if not isinstance(tenant_id, Unset):
        json_tenant_id = str(tenant_id)
    params["tenant_id"] = json_tenant_id

    json_source_id: str | Unset = UNSET
    if not isinstance(source_id, Unset):
        json_source_id = str(source_id)
    params["source_id"] = json_source_id

    params["event_id"] = event_id

    params["event_type"] = event_type

    params["object_id"] = object_id

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status.value

    params["status"] = json_status


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/events",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListOutEventBody | Problem | None:
    if response.status_code == 200:
        response_200 = ListOutEventBody.from_dict(response.json())



        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())



        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListOutEventBody | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    source_id: UUID | Unset = UNSET,
    event_id: str | Unset = UNSET,
    event_type: str | Unset = UNSET,
    object_id: str | Unset = UNSET,
    status: SearchEventsStatus | Unset = UNSET,

) -> Response[ListOutEventBody | Problem]:
    """ Search the inbox, newest first (name an event or object id, a tenant, a source, a status other than
    published, or since; or nothing: the newest events)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's events.
        source_id (UUID | Unset): Only this source's events.
        event_id (str | Unset): The provider's event id (evt_..., a delivery GUID).
        event_type (str | Unset): As stored, e.g. stripe.invoice.paid.
        object_id (str | Unset): The object the event is about, e.g. an invoice id.
        status (SearchEventsStatus | Unset): Only events in this status.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutEventBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
source_id=source_id,
event_id=event_id,
event_type=event_type,
object_id=object_id,
status=status,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    source_id: UUID | Unset = UNSET,
    event_id: str | Unset = UNSET,
    event_type: str | Unset = UNSET,
    object_id: str | Unset = UNSET,
    status: SearchEventsStatus | Unset = UNSET,

) -> ListOutEventBody | Problem | None:
    """ Search the inbox, newest first (name an event or object id, a tenant, a source, a status other than
    published, or since; or nothing: the newest events)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's events.
        source_id (UUID | Unset): Only this source's events.
        event_id (str | Unset): The provider's event id (evt_..., a delivery GUID).
        event_type (str | Unset): As stored, e.g. stripe.invoice.paid.
        object_id (str | Unset): The object the event is about, e.g. an invoice id.
        status (SearchEventsStatus | Unset): Only events in this status.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutEventBody | Problem
     """


    return sync_detailed(
        client=client,
cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
source_id=source_id,
event_id=event_id,
event_type=event_type,
object_id=object_id,
status=status,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    source_id: UUID | Unset = UNSET,
    event_id: str | Unset = UNSET,
    event_type: str | Unset = UNSET,
    object_id: str | Unset = UNSET,
    status: SearchEventsStatus | Unset = UNSET,

) -> Response[ListOutEventBody | Problem]:
    """ Search the inbox, newest first (name an event or object id, a tenant, a source, a status other than
    published, or since; or nothing: the newest events)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's events.
        source_id (UUID | Unset): Only this source's events.
        event_id (str | Unset): The provider's event id (evt_..., a delivery GUID).
        event_type (str | Unset): As stored, e.g. stripe.invoice.paid.
        object_id (str | Unset): The object the event is about, e.g. an invoice id.
        status (SearchEventsStatus | Unset): Only events in this status.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutEventBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
source_id=source_id,
event_id=event_id,
event_type=event_type,
object_id=object_id,
status=status,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    source_id: UUID | Unset = UNSET,
    event_id: str | Unset = UNSET,
    event_type: str | Unset = UNSET,
    object_id: str | Unset = UNSET,
    status: SearchEventsStatus | Unset = UNSET,

) -> ListOutEventBody | Problem | None:
    """ Search the inbox, newest first (name an event or object id, a tenant, a source, a status other than
    published, or since; or nothing: the newest events)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's events.
        source_id (UUID | Unset): Only this source's events.
        event_id (str | Unset): The provider's event id (evt_..., a delivery GUID).
        event_type (str | Unset): As stored, e.g. stripe.invoice.paid.
        object_id (str | Unset): The object the event is about, e.g. an invoice id.
        status (SearchEventsStatus | Unset): Only events in this status.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutEventBody | Problem
     """


    return (await asyncio_detailed(
        client=client,
cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
source_id=source_id,
event_id=event_id,
event_type=event_type,
object_id=object_id,
status=status,

    )).parsed
