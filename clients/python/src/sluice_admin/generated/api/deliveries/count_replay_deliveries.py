from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.replay_count import ReplayCount
from typing import cast
from uuid import UUID
import datetime



def _get_kwargs(
    *,
    endpoint_id: UUID,
    since: datetime.datetime,
    until: datetime.datetime,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    json_endpoint_id = str(endpoint_id)
    params["endpoint_id"] = json_endpoint_id

    json_since = since.isoformat()
    params["since"] = json_since

    json_until = until.isoformat()
    params["until"] = json_until


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/deliveries/replay/count",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ReplayCount | None:
    if response.status_code == 200:
        response_200 = ReplayCount.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ReplayCount]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    endpoint_id: UUID,
    since: datetime.datetime,
    until: datetime.datetime,

) -> Response[Problem | ReplayCount]:
    """ The dry run of a replay: how many of an endpoint's deliveries created in [since, until) POST
    /deliveries/replay would send again now (at most 10000: more says the window holds more); changes
    nothing

    Args:
        endpoint_id (UUID): The endpoint whose window is counted.
        since (datetime.datetime): Deliveries created from this time (RFC 3339), inclusive.
        until (datetime.datetime): Deliveries created before this time; after since, and at most
            the payload horizon after it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayCount]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
since=since,
until=until,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    endpoint_id: UUID,
    since: datetime.datetime,
    until: datetime.datetime,

) -> Problem | ReplayCount | None:
    """ The dry run of a replay: how many of an endpoint's deliveries created in [since, until) POST
    /deliveries/replay would send again now (at most 10000: more says the window holds more); changes
    nothing

    Args:
        endpoint_id (UUID): The endpoint whose window is counted.
        since (datetime.datetime): Deliveries created from this time (RFC 3339), inclusive.
        until (datetime.datetime): Deliveries created before this time; after since, and at most
            the payload horizon after it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayCount
     """


    return sync_detailed(
        client=client,
endpoint_id=endpoint_id,
since=since,
until=until,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    endpoint_id: UUID,
    since: datetime.datetime,
    until: datetime.datetime,

) -> Response[Problem | ReplayCount]:
    """ The dry run of a replay: how many of an endpoint's deliveries created in [since, until) POST
    /deliveries/replay would send again now (at most 10000: more says the window holds more); changes
    nothing

    Args:
        endpoint_id (UUID): The endpoint whose window is counted.
        since (datetime.datetime): Deliveries created from this time (RFC 3339), inclusive.
        until (datetime.datetime): Deliveries created before this time; after since, and at most
            the payload horizon after it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayCount]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
since=since,
until=until,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    endpoint_id: UUID,
    since: datetime.datetime,
    until: datetime.datetime,

) -> Problem | ReplayCount | None:
    """ The dry run of a replay: how many of an endpoint's deliveries created in [since, until) POST
    /deliveries/replay would send again now (at most 10000: more says the window holds more); changes
    nothing

    Args:
        endpoint_id (UUID): The endpoint whose window is counted.
        since (datetime.datetime): Deliveries created from this time (RFC 3339), inclusive.
        until (datetime.datetime): Deliveries created before this time; after since, and at most
            the payload horizon after it.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayCount
     """


    return (await asyncio_detailed(
        client=client,
endpoint_id=endpoint_id,
since=since,
until=until,

    )).parsed
