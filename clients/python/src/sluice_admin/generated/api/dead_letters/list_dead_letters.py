from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_out_dead_letter_body import ListOutDeadLetterBody
from ...models.problem import Problem
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
    group: str | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    reason: str | Unset = UNSET,
    replayed: bool | Unset = UNSET,

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

    params["group"] = group

    json_tenant_id: str | Unset = UNSET
    if not isinstance(tenant_id, Unset):
        json_tenant_id = str(tenant_id)
    params["tenant_id"] = json_tenant_id

    params["reason"] = reason

    params["replayed"] = replayed


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/dead-letters",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListOutDeadLetterBody | Problem | None:
    if response.status_code == 200:
        response_200 = ListOutDeadLetterBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListOutDeadLetterBody | Problem]:
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
    group: str | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    reason: str | Unset = UNSET,
    replayed: bool | Unset = UNSET,

) -> Response[ListOutDeadLetterBody | Problem]:
    """ List dead letters, newest first (no payloads)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        group (str | Unset): Only this consumer group's.
        tenant_id (UUID | Unset): Only this tenant's.
        reason (str | Unset): Only letters whose reason contains this, case-insensitively.
        replayed (bool | Unset): Include letters replayed already.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutDeadLetterBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
since=since,
until=until,
group=group,
tenant_id=tenant_id,
reason=reason,
replayed=replayed,

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
    group: str | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    reason: str | Unset = UNSET,
    replayed: bool | Unset = UNSET,

) -> ListOutDeadLetterBody | Problem | None:
    """ List dead letters, newest first (no payloads)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        group (str | Unset): Only this consumer group's.
        tenant_id (UUID | Unset): Only this tenant's.
        reason (str | Unset): Only letters whose reason contains this, case-insensitively.
        replayed (bool | Unset): Include letters replayed already.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutDeadLetterBody | Problem
     """


    return sync_detailed(
        client=client,
cursor=cursor,
limit=limit,
since=since,
until=until,
group=group,
tenant_id=tenant_id,
reason=reason,
replayed=replayed,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    group: str | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    reason: str | Unset = UNSET,
    replayed: bool | Unset = UNSET,

) -> Response[ListOutDeadLetterBody | Problem]:
    """ List dead letters, newest first (no payloads)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        group (str | Unset): Only this consumer group's.
        tenant_id (UUID | Unset): Only this tenant's.
        reason (str | Unset): Only letters whose reason contains this, case-insensitively.
        replayed (bool | Unset): Include letters replayed already.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutDeadLetterBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
since=since,
until=until,
group=group,
tenant_id=tenant_id,
reason=reason,
replayed=replayed,

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
    group: str | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    reason: str | Unset = UNSET,
    replayed: bool | Unset = UNSET,

) -> ListOutDeadLetterBody | Problem | None:
    """ List dead letters, newest first (no payloads)

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        group (str | Unset): Only this consumer group's.
        tenant_id (UUID | Unset): Only this tenant's.
        reason (str | Unset): Only letters whose reason contains this, case-insensitively.
        replayed (bool | Unset): Include letters replayed already.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutDeadLetterBody | Problem
     """


    return (await asyncio_detailed(
        client=client,
cursor=cursor,
limit=limit,
since=since,
until=until,
group=group,
tenant_id=tenant_id,
reason=reason,
replayed=replayed,

    )).parsed
