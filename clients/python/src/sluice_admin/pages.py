"""Paging by cursor, for the iterators of ops_gen.py."""

from collections.abc import Callable, Iterator
from typing import Any


def pages(sync: Callable[..., Any], client: Any, params: dict[str, Any]) -> Iterator[Any]:
    """Yields the items of every page of a list operation, from params["cursor"] on."""
    params = dict(params)
    while True:
        page = sync(client=client, **params)
        yield from page.items
        nxt = page.next_cursor
        if not isinstance(nxt, str) or not nxt:
            return
        params["cursor"] = nxt
