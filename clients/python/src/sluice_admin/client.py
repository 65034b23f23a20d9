"""The hand-written layer over the generated client (sluice_admin.generated):
the token, a create's Idempotency-Key, retries on 429 and 503 after their
Retry-After, and refusals raised as ProblemError."""

import email.utils
import time
import uuid
from typing import Any

import httpx

from .generated.client import AuthenticatedClient
from .ops_gen import CREATES


class ProblemError(Exception):
    """A refusal of the API: its status and RFC 9457 problem detail (problem, a dict)."""

    def __init__(self, status: int, problem: dict[str, Any]):
        self.status = status
        self.problem = problem
        self.title = problem.get("title", "")
        self.detail = problem.get("detail", "")
        self.errors = problem.get("errors") or []
        self.request_id = problem.get("request_id", "")
        where = "".join(f"; {e.get('location')}: {e.get('message')}" for e in self.errors)
        super().__init__(f"sluice admin API: {status} {self.title}{': ' + self.detail if self.detail else ''}{where}")


def idempotency_key() -> str:
    """A fresh Idempotency-Key (what the client sends on a create that carries none)."""
    return uuid.uuid4().hex


def client(base_url: str, token: str, *, retries: int = 4, max_wait: float = 30.0, timeout: float = 30.0) -> AuthenticatedClient:
    """A client of the admin API at base_url (the admin listener, e.g.
    http://127.0.0.1:8082) authenticating with token (`sluice admintoken
    create`). A 429, or a 503 to a request safe to repeat (GET, PUT, DELETE or
    a create under its key), is sent again up to retries times after its
    Retry-After; a longer wait than max_wait seconds raises at once."""
    transport = _Sender(httpx.HTTPTransport(), retries, max_wait)
    return AuthenticatedClient(
        base_url=base_url,
        token=token,
        timeout=httpx.Timeout(timeout),
        raise_on_unexpected_status=True,
        httpx_args={"transport": transport, "event_hooks": {"response": [_raise_problem]}},
    )


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Reads Retry-After (seconds or an HTTP date) as seconds."""
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(at - (time.time() if now is None else now), 0.0)


class _Sender(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, retries: int, max_wait: float):
        self.inner, self.retries, self.max_wait = inner, retries, max_wait

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        create = any(m == request.method and p.match(request.url.path) for m, p in CREATES)
        if create and "Idempotency-Key" not in request.headers:
            request.headers["Idempotency-Key"] = idempotency_key()
        safe = create or request.method in ("GET", "PUT", "DELETE")
        attempt = 0
        while True:
            response = self.inner.handle_request(request)
            again = response.status_code == 429 or (response.status_code == 503 and safe)
            if not again or attempt >= self.retries:
                return response
            wait = retry_after(response.headers.get("Retry-After"))
            if wait is None:
                wait = min(0.25 * 2**attempt, self.max_wait)
            if wait > self.max_wait:
                return response
            response.close()
            time.sleep(wait)
            attempt += 1

    def close(self) -> None:
        self.inner.close()


def _raise_problem(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    response.read()
    problem: dict[str, Any] = {}
    if "json" in response.headers.get("Content-Type", ""):
        try:
            problem = response.json()
        except ValueError:
            problem = {}
    problem.setdefault("status", response.status_code)
    problem.setdefault("title", response.reason_phrase)
    raise ProblemError(response.status_code, problem)
