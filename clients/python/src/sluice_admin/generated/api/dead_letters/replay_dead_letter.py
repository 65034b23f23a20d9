from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.replay_result import ReplayResult
from typing import cast



def _get_kwargs(
    dead_letter_id: int,

) -> dict[str, Any]:
    

    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/admin/v1/dead-letters/{dead_letter_id}/replay".format(dead_letter_id=quote(str(dead_letter_id), safe=""),),
    }


    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ReplayResult | None:
    if response.status_code == 200:
        response_200 = ReplayResult.from_dict(response.json())



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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ReplayResult]:
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

) -> Response[Problem | ReplayResult]:
    """ Apply a dead letter again through its group's idempotent handler (once: a second replay is 409; one
    that fails again is 422 with the reason and failed_id, and stays pending)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayResult]
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

) -> Problem | ReplayResult | None:
    """ Apply a dead letter again through its group's idempotent handler (once: a second replay is 409; one
    that fails again is 422 with the reason and failed_id, and stays pending)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayResult
     """


    return sync_detailed(
        dead_letter_id=dead_letter_id,
client=client,

    ).parsed

async def asyncio_detailed(
    dead_letter_id: int,
    *,
    client: AuthenticatedClient | Client,

) -> Response[Problem | ReplayResult]:
    """ Apply a dead letter again through its group's idempotent handler (once: a second replay is 409; one
    that fails again is 422 with the reason and failed_id, and stays pending)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayResult]
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

) -> Problem | ReplayResult | None:
    """ Apply a dead letter again through its group's idempotent handler (once: a second replay is 409; one
    that fails again is 422 with the reason and failed_id, and stays pending)

    Args:
        dead_letter_id (int): Dead letter id.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayResult
     """


    return (await asyncio_detailed(
        dead_letter_id=dead_letter_id,
client=client,

    )).parsed
