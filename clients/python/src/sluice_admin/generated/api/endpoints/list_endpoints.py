from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_endpoints_enabled import ListEndpointsEnabled
from ...models.list_out_endpoint_body import ListOutEndpointBody
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    tenant_id: UUID,
    *,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    enabled: ListEndpointsEnabled | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["cursor"] = cursor

    params["limit"] = limit

    json_enabled: str | Unset = UNSET
    if not isinstance(enabled, Unset):
        json_enabled = enabled.value

    params["enabled"] = json_enabled


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/tenants/{tenant_id}/endpoints".format(tenant_id=quote(str(tenant_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListOutEndpointBody | Problem | None:
    if response.status_code == 200:
        response_200 = ListOutEndpointBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListOutEndpointBody | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    enabled: ListEndpointsEnabled | Unset = UNSET,

) -> Response[ListOutEndpointBody | Problem]:
    """ The tenant's endpoints (never their secrets)

    Args:
        tenant_id (UUID): Tenant id.
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        enabled (ListEndpointsEnabled | Unset): Only enabled (true) or disabled (false) endpoints.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutEndpointBody | Problem]
     """


    kwargs = _get_kwargs(
        tenant_id=tenant_id,
cursor=cursor,
limit=limit,
enabled=enabled,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    enabled: ListEndpointsEnabled | Unset = UNSET,

) -> ListOutEndpointBody | Problem | None:
    """ The tenant's endpoints (never their secrets)

    Args:
        tenant_id (UUID): Tenant id.
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        enabled (ListEndpointsEnabled | Unset): Only enabled (true) or disabled (false) endpoints.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutEndpointBody | Problem
     """


    return sync_detailed(
        tenant_id=tenant_id,
client=client,
cursor=cursor,
limit=limit,
enabled=enabled,

    ).parsed

async def asyncio_detailed(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    enabled: ListEndpointsEnabled | Unset = UNSET,

) -> Response[ListOutEndpointBody | Problem]:
    """ The tenant's endpoints (never their secrets)

    Args:
        tenant_id (UUID): Tenant id.
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        enabled (ListEndpointsEnabled | Unset): Only enabled (true) or disabled (false) endpoints.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutEndpointBody | Problem]
     """


    kwargs = _get_kwargs(
        tenant_id=tenant_id,
cursor=cursor,
limit=limit,
enabled=enabled,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    enabled: ListEndpointsEnabled | Unset = UNSET,

) -> ListOutEndpointBody | Problem | None:
    """ The tenant's endpoints (never their secrets)

    Args:
        tenant_id (UUID): Tenant id.
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        enabled (ListEndpointsEnabled | Unset): Only enabled (true) or disabled (false) endpoints.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutEndpointBody | Problem
     """


    return (await asyncio_detailed(
        tenant_id=tenant_id,
client=client,
cursor=cursor,
limit=limit,
enabled=enabled,

    )).parsed
