from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_out_tenant_body import ListOutTenantBody
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    name: str | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["cursor"] = cursor

    params["limit"] = limit

    params["name"] = name


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/tenants",
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListOutTenantBody | Problem | None:
    if response.status_code == 200:
        response_200 = ListOutTenantBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListOutTenantBody | Problem]:
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
    name: str | Unset = UNSET,

) -> Response[ListOutTenantBody | Problem]:
    """ List tenants

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        name (str | Unset): Only the tenants whose name holds this text (any case), or whose id it
            is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutTenantBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
name=name,

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
    name: str | Unset = UNSET,

) -> ListOutTenantBody | Problem | None:
    """ List tenants

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        name (str | Unset): Only the tenants whose name holds this text (any case), or whose id it
            is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutTenantBody | Problem
     """


    return sync_detailed(
        client=client,
cursor=cursor,
limit=limit,
name=name,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    cursor: str | Unset = UNSET,
    limit: int | Unset = 50,
    name: str | Unset = UNSET,

) -> Response[ListOutTenantBody | Problem]:
    """ List tenants

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        name (str | Unset): Only the tenants whose name holds this text (any case), or whose id it
            is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutTenantBody | Problem]
     """


    kwargs = _get_kwargs(
        cursor=cursor,
limit=limit,
name=name,

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
    name: str | Unset = UNSET,

) -> ListOutTenantBody | Problem | None:
    """ List tenants

    Args:
        cursor (str | Unset): The next_cursor of the previous page; absent: the first page.
        limit (int | Unset): Most items in the page. Default: 50.
        name (str | Unset): Only the tenants whose name holds this text (any case), or whose id it
            is.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutTenantBody | Problem
     """


    return (await asyncio_detailed(
        client=client,
cursor=cursor,
limit=limit,
name=name,

    )).parsed
