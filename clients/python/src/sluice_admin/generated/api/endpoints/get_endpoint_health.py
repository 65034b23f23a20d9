from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.endpoint_health import EndpointHealth
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    endpoint_id: UUID,
    *,
    hours: int | Unset = 24,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["hours"] = hours


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/endpoints/{endpoint_id}/health".format(endpoint_id=quote(str(endpoint_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EndpointHealth | Problem | None:
    if response.status_code == 200:
        response_200 = EndpointHealth.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EndpointHealth | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    hours: int | Unset = 24,

) -> Response[EndpointHealth | Problem]:
    """ An endpoint's health over the last hours: requests, delivered, failed, success rate, latency p50 and
    p99, each hour's figures

    Args:
        endpoint_id (UUID): Endpoint id.
        hours (int | Unset): The window: the last this many hours (1 to 168, a week). Default: 24.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointHealth | Problem]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
hours=hours,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    hours: int | Unset = 24,

) -> EndpointHealth | Problem | None:
    """ An endpoint's health over the last hours: requests, delivered, failed, success rate, latency p50 and
    p99, each hour's figures

    Args:
        endpoint_id (UUID): Endpoint id.
        hours (int | Unset): The window: the last this many hours (1 to 168, a week). Default: 24.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointHealth | Problem
     """


    return sync_detailed(
        endpoint_id=endpoint_id,
client=client,
hours=hours,

    ).parsed

async def asyncio_detailed(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    hours: int | Unset = 24,

) -> Response[EndpointHealth | Problem]:
    """ An endpoint's health over the last hours: requests, delivered, failed, success rate, latency p50 and
    p99, each hour's figures

    Args:
        endpoint_id (UUID): Endpoint id.
        hours (int | Unset): The window: the last this many hours (1 to 168, a week). Default: 24.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointHealth | Problem]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
hours=hours,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    hours: int | Unset = 24,

) -> EndpointHealth | Problem | None:
    """ An endpoint's health over the last hours: requests, delivered, failed, success rate, latency p50 and
    p99, each hour's figures

    Args:
        endpoint_id (UUID): Endpoint id.
        hours (int | Unset): The window: the last this many hours (1 to 168, a week). Default: 24.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointHealth | Problem
     """


    return (await asyncio_detailed(
        endpoint_id=endpoint_id,
client=client,
hours=hours,

    )).parsed
