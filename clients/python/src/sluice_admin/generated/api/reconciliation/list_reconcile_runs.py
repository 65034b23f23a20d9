from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.runs_out_body import RunsOutBody
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    *,
    limit: int | Unset = 20,
    source_id: UUID | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["limit"] = limit

    json_source_id: str | Unset = UNSET
    if not isinstance(source_id, Unset):
        json_source_id = str(source_id)
    params["source_id"] = json_source_id

    json_tenant_id: str | Unset = UNSET
    if not isinstance(tenant_id, Unset):
        json_tenant_id = str(tenant_id)
    params["tenant_id"] = json_tenant_id


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/reconcile/runs",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RunsOutBody | None:
    if response.status_code == 200:
        response_200 = RunsOutBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RunsOutBody]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    source_id: UUID | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,

) -> Response[Problem | RunsOutBody]:
    """ The latest reconciliation runs across sources, newest first

    Args:
        limit (int | Unset): Most runs listed, newest first. Default: 20.
        source_id (UUID | Unset): Only this source's runs.
        tenant_id (UUID | Unset): Only the runs of this tenant's sources.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunsOutBody]
     """


    kwargs = _get_kwargs(
        limit=limit,
source_id=source_id,
tenant_id=tenant_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    source_id: UUID | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,

) -> Problem | RunsOutBody | None:
    """ The latest reconciliation runs across sources, newest first

    Args:
        limit (int | Unset): Most runs listed, newest first. Default: 20.
        source_id (UUID | Unset): Only this source's runs.
        tenant_id (UUID | Unset): Only the runs of this tenant's sources.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunsOutBody
     """


    return sync_detailed(
        client=client,
limit=limit,
source_id=source_id,
tenant_id=tenant_id,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    source_id: UUID | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,

) -> Response[Problem | RunsOutBody]:
    """ The latest reconciliation runs across sources, newest first

    Args:
        limit (int | Unset): Most runs listed, newest first. Default: 20.
        source_id (UUID | Unset): Only this source's runs.
        tenant_id (UUID | Unset): Only the runs of this tenant's sources.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunsOutBody]
     """


    kwargs = _get_kwargs(
        limit=limit,
source_id=source_id,
tenant_id=tenant_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    limit: int | Unset = 20,
    source_id: UUID | Unset = UNSET,
    tenant_id: UUID | Unset = UNSET,

) -> Problem | RunsOutBody | None:
    """ The latest reconciliation runs across sources, newest first

    Args:
        limit (int | Unset): Most runs listed, newest first. Default: 20.
        source_id (UUID | Unset): Only this source's runs.
        tenant_id (UUID | Unset): Only the runs of this tenant's sources.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunsOutBody
     """


    return (await asyncio_detailed(
        client=client,
limit=limit,
source_id=source_id,
tenant_id=tenant_id,

    )).parsed
