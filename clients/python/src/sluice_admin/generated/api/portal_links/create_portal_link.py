from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.portal_link_created import PortalLinkCreated
from ...models.portal_link_request import PortalLinkRequest
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    tenant_id: UUID,
    *,
    body: PortalLinkRequest,
    idempotency_key: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/admin/v1/tenants/{tenant_id}/portal-links".format(tenant_id=quote(str(tenant_id), safe=""),),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> PortalLinkCreated | Problem | None:
    if response.status_code == 201:
        response_201 = PortalLinkCreated.from_dict(response.json())



        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[PortalLinkCreated | Problem]:
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
    body: PortalLinkRequest,
    idempotency_key: str | Unset = UNSET,

) -> Response[PortalLinkCreated | Problem]:
    """ Mint a portal link: one visitor, once, signed into the tenant's destinations or whole view (audited)

     The link opens the portal (served on the portal listener, never the admin one) and is used by a POST
    its page makes: single use, expires unused after the deployment's link lifetime (default 10
    minutes), and starts a session of at most an hour. A portal session with access read neither acts
    nor reads payloads; with scope destinations it reaches the tenant's endpoints and deliveries only.

    Args:
        tenant_id (UUID): Tenant id.
        idempotency_key (str | Unset):
        body (PortalLinkRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PortalLinkCreated | Problem]
     """


    kwargs = _get_kwargs(
        tenant_id=tenant_id,
body=body,
idempotency_key=idempotency_key,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: PortalLinkRequest,
    idempotency_key: str | Unset = UNSET,

) -> PortalLinkCreated | Problem | None:
    """ Mint a portal link: one visitor, once, signed into the tenant's destinations or whole view (audited)

     The link opens the portal (served on the portal listener, never the admin one) and is used by a POST
    its page makes: single use, expires unused after the deployment's link lifetime (default 10
    minutes), and starts a session of at most an hour. A portal session with access read neither acts
    nor reads payloads; with scope destinations it reaches the tenant's endpoints and deliveries only.

    Args:
        tenant_id (UUID): Tenant id.
        idempotency_key (str | Unset):
        body (PortalLinkRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PortalLinkCreated | Problem
     """


    return sync_detailed(
        tenant_id=tenant_id,
client=client,
body=body,
idempotency_key=idempotency_key,

    ).parsed

async def asyncio_detailed(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: PortalLinkRequest,
    idempotency_key: str | Unset = UNSET,

) -> Response[PortalLinkCreated | Problem]:
    """ Mint a portal link: one visitor, once, signed into the tenant's destinations or whole view (audited)

     The link opens the portal (served on the portal listener, never the admin one) and is used by a POST
    its page makes: single use, expires unused after the deployment's link lifetime (default 10
    minutes), and starts a session of at most an hour. A portal session with access read neither acts
    nor reads payloads; with scope destinations it reaches the tenant's endpoints and deliveries only.

    Args:
        tenant_id (UUID): Tenant id.
        idempotency_key (str | Unset):
        body (PortalLinkRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PortalLinkCreated | Problem]
     """


    kwargs = _get_kwargs(
        tenant_id=tenant_id,
body=body,
idempotency_key=idempotency_key,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    tenant_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: PortalLinkRequest,
    idempotency_key: str | Unset = UNSET,

) -> PortalLinkCreated | Problem | None:
    """ Mint a portal link: one visitor, once, signed into the tenant's destinations or whole view (audited)

     The link opens the portal (served on the portal listener, never the admin one) and is used by a POST
    its page makes: single use, expires unused after the deployment's link lifetime (default 10
    minutes), and starts a session of at most an hour. A portal session with access read neither acts
    nor reads payloads; with scope destinations it reaches the tenant's endpoints and deliveries only.

    Args:
        tenant_id (UUID): Tenant id.
        idempotency_key (str | Unset):
        body (PortalLinkRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PortalLinkCreated | Problem
     """


    return (await asyncio_detailed(
        tenant_id=tenant_id,
client=client,
body=body,
idempotency_key=idempotency_key,

    )).parsed
