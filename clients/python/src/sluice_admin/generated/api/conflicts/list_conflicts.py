from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_conflicts_state import ListConflictsState
from ...models.list_out_conflict_body import ListOutConflictBody
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
    tenant_id: UUID | Unset = UNSET,
    state: ListConflictsState | Unset = UNSET,

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

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/conflicts",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListOutConflictBody | Problem | None:
    if response.status_code == 200:
        response_200 = ListOutConflictBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListOutConflictBody | Problem]:
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
    state: ListConflictsState | Unset = UNSET,

) -> Response[ListOutConflictBody | Problem]:
    """ List conflicting deliveries (same event key, different content), newest first

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's.
        state (ListConflictsState | Unset): Only those still open (no decision), dismissed or
            resolved; absent: all.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutConflictBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
state=state,

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
    state: ListConflictsState | Unset = UNSET,

) -> ListOutConflictBody | Problem | None:
    """ List conflicting deliveries (same event key, different content), newest first

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's.
        state (ListConflictsState | Unset): Only those still open (no decision), dismissed or
            resolved; absent: all.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutConflictBody | Problem
     """


    return sync_detailed(
        client=client,
cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
state=state,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    since: datetime.datetime | Unset = UNSET,
    until: datetime.datetime | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,
    state: ListConflictsState | Unset = UNSET,

) -> Response[ListOutConflictBody | Problem]:
    """ List conflicting deliveries (same event key, different content), newest first

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's.
        state (ListConflictsState | Unset): Only those still open (no decision), dismissed or
            resolved; absent: all.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutConflictBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
state=state,

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
    state: ListConflictsState | Unset = UNSET,

) -> ListOutConflictBody | Problem | None:
    """ List conflicting deliveries (same event key, different content), newest first

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        since (datetime.datetime | Unset): Only from this time (RFC 3339), inclusive.
        until (datetime.datetime | Unset): Only before this time (RFC 3339); after since.
        tenant_id (UUID | Unset): Only this tenant's.
        state (ListConflictsState | Unset): Only those still open (no decision), dismissed or
            resolved; absent: all.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutConflictBody | Problem
     """


    return (await asyncio_detailed(
        client=client,
cursor=cursor,
limit=limit,
since=since,
until=until,
tenant_id=tenant_id,
state=state,

    )).parsed
