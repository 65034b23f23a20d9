from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.portal_link import PortalLink
from ...models.problem import Problem
from typing import cast
from uuid import UUID



def _get_kwargs(
    link_id: UUID,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/portal-links/{link_id}".format(link_id=quote(str(link_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PortalLink | Problem | None:
    if response.status_code == 200:
        response_200 = PortalLink.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PortalLink | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    link_id: UUID,
    *,
    client: AuthenticatedClient | Client,

) -> Response[PortalLink | Problem]:
    """ A portal link's record (never its secret): whether it was used, and the token of the session it
    started

    Args:
        link_id (UUID): Portal link id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PortalLink | Problem]
     """


    kwargs = _get_kwargs(
        link_id=link_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    link_id: UUID,
    *,
    client: AuthenticatedClient | Client,

) -> PortalLink | Problem | None:
    """ A portal link's record (never its secret): whether it was used, and the token of the session it
    started

    Args:
        link_id (UUID): Portal link id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PortalLink | Problem
     """


    return sync_detailed(
        link_id=link_id,
client=client,

    ).parsed

async def asyncio_detailed(
    link_id: UUID,
    *,
    client: AuthenticatedClient | Client,

) -> Response[PortalLink | Problem]:
    """ A portal link's record (never its secret): whether it was used, and the token of the session it
    started

    Args:
        link_id (UUID): Portal link id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PortalLink | Problem]
     """


    kwargs = _get_kwargs(
        link_id=link_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    link_id: UUID,
    *,
    client: AuthenticatedClient | Client,

) -> PortalLink | Problem | None:
    """ A portal link's record (never its secret): whether it was used, and the token of the session it
    started

    Args:
        link_id (UUID): Portal link id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PortalLink | Problem
     """


    return (await asyncio_detailed(
        link_id=link_id,
client=client,

    )).parsed
