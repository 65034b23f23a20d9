from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.request_as_sent import RequestAsSent
from typing import cast



def _get_kwargs(
    delivery_id: int,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/deliveries/{delivery_id}/request".format(delivery_id=quote(str(delivery_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RequestAsSent | None:
    if response.status_code == 200:
        response_200 = RequestAsSent.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RequestAsSent]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    delivery_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Response[Problem | RequestAsSent]:
    """ A delivery's latest request as sent, rebuilt from the event and the signing inputs: method, URL,
    headers (signature and static header values masked) and body (a payload read, audited)

    Args:
        delivery_id (int): Delivery id (the id a list of deliveries returns).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RequestAsSent]
     """


    kwargs = _get_kwargs(
        delivery_id=delivery_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    delivery_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Problem | RequestAsSent | None:
    """ A delivery's latest request as sent, rebuilt from the event and the signing inputs: method, URL,
    headers (signature and static header values masked) and body (a payload read, audited)

    Args:
        delivery_id (int): Delivery id (the id a list of deliveries returns).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RequestAsSent
     """


    return sync_detailed(
        delivery_id=delivery_id,
client=client,

    ).parsed

async def asyncio_detailed(
    delivery_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Response[Problem | RequestAsSent]:
    """ A delivery's latest request as sent, rebuilt from the event and the signing inputs: method, URL,
    headers (signature and static header values masked) and body (a payload read, audited)

    Args:
        delivery_id (int): Delivery id (the id a list of deliveries returns).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RequestAsSent]
     """


    kwargs = _get_kwargs(
        delivery_id=delivery_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    delivery_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Problem | RequestAsSent | None:
    """ A delivery's latest request as sent, rebuilt from the event and the signing inputs: method, URL,
    headers (signature and static header values masked) and body (a payload read, audited)

    Args:
        delivery_id (int): Delivery id (the id a list of deliveries returns).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RequestAsSent
     """


    return (await asyncio_detailed(
        delivery_id=delivery_id,
client=client,

    )).parsed
