from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.list_out_event_type_body import ListOutEventTypeBody
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    tenant_id: UUID,
    *,
    source_kind: str | Unset = UNSET,
    deprecated: bool | Unset = UNSET,

) -> dict[str, Any]:
    

    

    params: dict[str, Any] = {}

    params["source_kind"] = source_kind

    params["deprecated"] = deprecated


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/tenants/{tenant_id}/event-types".format(tenant_id=quote(str(tenant_id), safe=""),),
        "params": params,
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> ListOutEventTypeBody | Problem | None:
    if response.status_code == 200:
        response_200 = ListOutEventTypeBody.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[ListOutEventTypeBody | Problem]:
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
    source_kind: str | Unset = UNSET,
    deprecated: bool | Unset = UNSET,

) -> Response[ListOutEventTypeBody | Problem]:
    """ The tenant's event types, newest version of each

    Args:
        tenant_id (UUID): Tenant id.
        source_kind (str | Unset): Only types of this source kind.
        deprecated (bool | Unset): Include deprecated types.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutEventTypeBody | Problem]
     """


    kwargs = _get_kwargs(
        tenant_id=tenant_id,
source_kind=source_kind,
deprecated=deprecated,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    source_kind: str | Unset = UNSET,
    deprecated: bool | Unset = UNSET,

) -> ListOutEventTypeBody | Problem | None:
    """ The tenant's event types, newest version of each

    Args:
        tenant_id (UUID): Tenant id.
        source_kind (str | Unset): Only types of this source kind.
        deprecated (bool | Unset): Include deprecated types.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutEventTypeBody | Problem
     """


    return sync_detailed(
        tenant_id=tenant_id,
client=client,
source_kind=source_kind,
deprecated=deprecated,

    ).parsed

async def asyncio_detailed(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    source_kind: str | Unset = UNSET,
    deprecated: bool | Unset = UNSET,

) -> Response[ListOutEventTypeBody | Problem]:
    """ The tenant's event types, newest version of each

    Args:
        tenant_id (UUID): Tenant id.
        source_kind (str | Unset): Only types of this source kind.
        deprecated (bool | Unset): Include deprecated types.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[ListOutEventTypeBody | Problem]
     """


    kwargs = _get_kwargs(
        tenant_id=tenant_id,
source_kind=source_kind,
deprecated=deprecated,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    source_kind: str | Unset = UNSET,
    deprecated: bool | Unset = UNSET,

) -> ListOutEventTypeBody | Problem | None:
    """ The tenant's event types, newest version of each

    Args:
        tenant_id (UUID): Tenant id.
        source_kind (str | Unset): Only types of this source kind.
        deprecated (bool | Unset): Include deprecated types.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        ListOutEventTypeBody | Problem
     """


    return (await asyncio_detailed(
        tenant_id=tenant_id,
client=client,
source_kind=source_kind,
deprecated=deprecated,

    )).parsed
