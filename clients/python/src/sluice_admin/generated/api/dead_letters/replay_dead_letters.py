from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.dead_letter_filter_body_type_0 import DeadLetterFilterBodyType0
from ...models.dead_letter_filter_body_type_1 import DeadLetterFilterBodyType1
from ...models.dead_letter_filter_body_type_2 import DeadLetterFilterBodyType2
from ...models.dead_letter_filter_body_type_3 import DeadLetterFilterBodyType3
from ...models.dead_letter_filter_body_type_4 import DeadLetterFilterBodyType4
from ...models.problem import Problem
from ...models.replay_result import ReplayResult
from typing import cast



def _get_kwargs(
    *,
    body: DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 | DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/admin/v1/dead-letters/replay",
    }

    
    if isinstance(body, DeadLetterFilterBodyType0):
        _kwargs["json"] = body.to_dict()
    elif isinstance(body, DeadLetterFilterBodyType1):
        _kwargs["json"] = body.to_dict()
    elif isinstance(body, DeadLetterFilterBodyType2):
        _kwargs["json"] = body.to_dict()
    elif isinstance(body, DeadLetterFilterBodyType3):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body.to_dict()


    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | ReplayResult | None:
    if response.status_code == 200:
        response_200 = ReplayResult.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | ReplayResult]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 | DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4,

) -> Response[Problem | ReplayResult]:
    """ Replay every pending dead letter a filter selects, oldest first; stops at the first that fails
    again: 422 with the reason, failed_id and the letters replayed before it

    Args:
        body (DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 |
            DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayResult]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 | DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4,

) -> Problem | ReplayResult | None:
    """ Replay every pending dead letter a filter selects, oldest first; stops at the first that fails
    again: 422 with the reason, failed_id and the letters replayed before it

    Args:
        body (DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 |
            DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayResult
     """


    return sync_detailed(
        client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 | DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4,

) -> Response[Problem | ReplayResult]:
    """ Replay every pending dead letter a filter selects, oldest first; stops at the first that fails
    again: 422 with the reason, failed_id and the letters replayed before it

    Args:
        body (DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 |
            DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ReplayResult]
     """


    kwargs = _get_kwargs(
        body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 | DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4,

) -> Problem | ReplayResult | None:
    """ Replay every pending dead letter a filter selects, oldest first; stops at the first that fails
    again: 422 with the reason, failed_id and the letters replayed before it

    Args:
        body (DeadLetterFilterBodyType0 | DeadLetterFilterBodyType1 | DeadLetterFilterBodyType2 |
            DeadLetterFilterBodyType3 | DeadLetterFilterBodyType4):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ReplayResult
     """


    return (await asyncio_detailed(
        client=client,
body=body,

    )).parsed
