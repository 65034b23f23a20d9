from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.rewind_body_type_0 import RewindBodyType0
from ...models.rewind_body_type_1 import RewindBodyType1
from ...models.rewind_body_type_2 import RewindBodyType2
from ...models.rewind_out import RewindOut
from typing import cast



def _get_kwargs(
    group: str,
    *,
    body: RewindBodyType0 | RewindBodyType1 | RewindBodyType2,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}


    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/admin/v1/consumer-groups/{group}/rewind".format(group=quote(str(group), safe=""),),
    }

    
    if isinstance(body, RewindBodyType0):
        _kwargs["json"] = body.to_dict()
    elif isinstance(body, RewindBodyType1):
        _kwargs["json"] = body.to_dict()
    else:
        _kwargs["json"] = body.to_dict()


    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | RewindOut | None:
    if response.status_code == 200:
        response_200 = RewindOut.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | RewindOut]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    group: str,
    *,
    client: AuthenticatedClient | Client,
    body: RewindBodyType0 | RewindBodyType1 | RewindBodyType2,

) -> Response[Problem | RewindOut]:
    """ Move a stopped group's offsets (dry run unless dry_run is false), as sluice replay does

    Args:
        group (str): Consumer group (e.g. sluice.credits).
        body (RewindBodyType0 | RewindBodyType1 | RewindBodyType2):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RewindOut]
     """


    kwargs = _get_kwargs(
        group=group,
body=body,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    group: str,
    *,
    client: AuthenticatedClient | Client,
    body: RewindBodyType0 | RewindBodyType1 | RewindBodyType2,

) -> Problem | RewindOut | None:
    """ Move a stopped group's offsets (dry run unless dry_run is false), as sluice replay does

    Args:
        group (str): Consumer group (e.g. sluice.credits).
        body (RewindBodyType0 | RewindBodyType1 | RewindBodyType2):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RewindOut
     """


    return sync_detailed(
        group=group,
client=client,
body=body,

    ).parsed

async def asyncio_detailed(
    group: str,
    *,
    client: AuthenticatedClient | Client,
    body: RewindBodyType0 | RewindBodyType1 | RewindBodyType2,

) -> Response[Problem | RewindOut]:
    """ Move a stopped group's offsets (dry run unless dry_run is false), as sluice replay does

    Args:
        group (str): Consumer group (e.g. sluice.credits).
        body (RewindBodyType0 | RewindBodyType1 | RewindBodyType2):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RewindOut]
     """


    kwargs = _get_kwargs(
        group=group,
body=body,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    group: str,
    *,
    client: AuthenticatedClient | Client,
    body: RewindBodyType0 | RewindBodyType1 | RewindBodyType2,

) -> Problem | RewindOut | None:
    """ Move a stopped group's offsets (dry run unless dry_run is false), as sluice replay does

    Args:
        group (str): Consumer group (e.g. sluice.credits).
        body (RewindBodyType0 | RewindBodyType1 | RewindBodyType2):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RewindOut
     """


    return (await asyncio_detailed(
        group=group,
client=client,
body=body,

    )).parsed
