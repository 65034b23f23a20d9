from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.endpoint_test import EndpointTest
from ...models.problem import Problem
from ...models.test_in_body import TestInBody
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    endpoint_id: UUID,
    *,
    body: TestInBody | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/admin/v1/endpoints/{endpoint_id}/test".format(endpoint_id=quote(str(endpoint_id), safe=""),),
    }

    
    if not isinstance(body, Unset):
        _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> EndpointTest | Problem | None:
    if response.status_code == 200:
        response_200 = EndpointTest.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[EndpointTest | Problem]:
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
    body: TestInBody | Unset = UNSET,

) -> Response[EndpointTest | Problem]:
    """ Send a signed test event to an endpoint now, a delivery of its own (stored nowhere, in no order or
    trail), and return the attempt and what was sent (503 where this process does not deliver)

    Args:
        endpoint_id (UUID): Endpoint id.
        body (TestInBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointTest | Problem]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: TestInBody | Unset = UNSET,

) -> EndpointTest | Problem | None:
    """ Send a signed test event to an endpoint now, a delivery of its own (stored nowhere, in no order or
    trail), and return the attempt and what was sent (503 where this process does not deliver)

    Args:
        endpoint_id (UUID): Endpoint id.
        body (TestInBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointTest | Problem
     """


    return sync_detailed(
        endpoint_id=endpoint_id,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: TestInBody | Unset = UNSET,

) -> Response[EndpointTest | Problem]:
    """ Send a signed test event to an endpoint now, a delivery of its own (stored nowhere, in no order or
    trail), and return the attempt and what was sent (503 where this process does not deliver)

    Args:
        endpoint_id (UUID): Endpoint id.
        body (TestInBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EndpointTest | Problem]
     """


    kwargs = _get_kwargs(
        endpoint_id=endpoint_id,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    endpoint_id: UUID,
    *,
    client: AuthenticatedClient | Client,
    body: TestInBody | Unset = UNSET,

) -> EndpointTest | Problem | None:
    """ Send a signed test event to an endpoint now, a delivery of its own (stored nowhere, in no order or
    trail), and return the attempt and what was sent (503 where this process does not deliver)

    Args:
        endpoint_id (UUID): Endpoint id.
        body (TestInBody | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EndpointTest | Problem
     """


    return (await asyncio_detailed(
        endpoint_id=endpoint_id,
client=client,
body=body,

    )).parsed
