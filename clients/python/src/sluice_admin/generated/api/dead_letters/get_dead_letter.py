from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.dead_letter_detail import DeadLetterDetail
from ...models.problem import Problem
from typing import cast



def _get_kwargs(
    dead_letter_id: int,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/admin/v1/dead-letters/{dead_letter_id}".format(dead_letter_id=quote(str(dead_letter_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DeadLetterDetail | Problem | None:
    if response.status_code == 200:
        response_200 = DeadLetterDetail.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DeadLetterDetail | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    dead_letter_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Response[DeadLetterDetail | Problem]:
    """ A dead letter with its record: key, headers, payload (audited)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadLetterDetail | Problem]
     """


    kwargs = _get_kwargs(
        dead_letter_id=dead_letter_id,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    dead_letter_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> DeadLetterDetail | Problem | None:
    """ A dead letter with its record: key, headers, payload (audited)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadLetterDetail | Problem
     """


    return sync_detailed(
        dead_letter_id=dead_letter_id,
client=client,

    ).parsed

async def asyncio_detailed(
    dead_letter_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Response[DeadLetterDetail | Problem]:
    """ A dead letter with its record: key, headers, payload (audited)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DeadLetterDetail | Problem]
     """


    kwargs = _get_kwargs(
        dead_letter_id=dead_letter_id,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    dead_letter_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> DeadLetterDetail | Problem | None:
    """ A dead letter with its record: key, headers, payload (audited)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DeadLetterDetail | Problem
     """


    return (await asyncio_detailed(
        dead_letter_id=dead_letter_id,
client=client,

    )).parsed
