"""Drives a live Sluice (SLUICE_ADMIN_URL, SLUICE_INGEST_URL, SLUICE_ADMIN_TOKEN:
command/internal/cli's TestPythonClientDrivesTheAdminAPI starts one)."""

import hashlib
import hmac
import http.server
import json
import os
import secrets
import threading
import time
import uuid

import httpx
import pytest

import sluice_admin
from sluice_admin import iterate
from sluice_admin.generated.api.admin_tokens import create_admin_token
from sluice_admin.generated.api.endpoints import create_endpoint
from sluice_admin.generated.api.sources import create_source
from sluice_admin.generated.api.tenants import create_tenant, get_tenant
from sluice_admin.generated.models import (
    ListDeliveriesState,
    NewEndpointBody,
    NewSourceBody,
    NewSourceBodyKind,
    NewTokenBody,
    NewTokenBodyRole,
    TenantCreateInBody,
)


def env(name):
    value = os.environ.get(name)
    assert value, f"{name} is unset: this test drives a live Sluice"
    return value


def stripe_signature(secret, body):
    """Signs body as Stripe does: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">."""
    t = int(time.time())
    mac = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def invoice_paid(event_id, customer):
    return json.dumps({"id": event_id, "object": "event", "type": "invoice.paid", "created": int(time.time()),
                       "data": {"object": {"id": "in_" + event_id, "object": "invoice", "customer": customer,
                                           "amount_paid": 0, "currency": "usd", "status": "paid"}}}).encode()


class Receiver(http.server.BaseHTTPRequestHandler):
    received = 0

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Receiver.received += 1
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def receiver():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    server.shutdown()


def test_the_python_client_drives_the_admin_api(receiver):
    admin = sluice_admin.client(env("SLUICE_ADMIN_URL"), env("SLUICE_ADMIN_TOKEN"))
    events = int(env("SLUICE_CLIENT_EVENTS"))
    s = secrets.token_hex(6)

    key = "tenant-" + s
    first = create_tenant.sync(client=admin, body=TenantCreateInBody(name="py-" + s), idempotency_key=key)
    again = create_tenant.sync(client=admin, body=TenantCreateInBody(name="py-" + s), idempotency_key=key)
    assert again.id == first.id, "the create sent again under its key made another tenant"
    tenant = uuid.UUID(first.id)

    secret = f"whsec_{s}{s}"
    source = create_source.sync(client=admin, body=NewSourceBody(
        tenant_id=tenant, kind=NewSourceBodyKind.STRIPE, account="acct_" + s, secret=secret))
    endpoint = create_endpoint.sync(tenant, client=admin, body=NewEndpointBody(url=receiver, filters=["*"]))
    token = create_admin_token.sync(client=admin, body=NewTokenBody(role=NewTokenBodyRole.READ, tenant_id=tenant))
    scoped = sluice_admin.client(env("SLUICE_ADMIN_URL"), token.token)

    def send(event_id):
        body = invoice_paid(event_id, "cus_" + s)
        r = httpx.post(f"{env('SLUICE_INGEST_URL')}/v1/ingest/{source.id}", content=body,
                       headers={"Content-Type": "application/json", "Stripe-Signature": stripe_signature(secret, body)})
        assert r.status_code == 202, event_id

    send("evt_" + s)
    deadline = time.monotonic() + 60
    while not any(d.event_id == "evt_" + s
                  for d in iterate.list_deliveries(scoped, endpoint_id=uuid.UUID(endpoint.id), state=ListDeliveriesState.DELIVERED)):
        assert time.monotonic() < deadline, "no delivery of the endpoint delivered within a minute"
        time.sleep(0.05)
    assert Receiver.received > 0, "the delivery is delivered and the receiver got nothing"

    for i in range(1, events):
        send(f"evt_{s}_{i}")
    seen = {ev.event_id for ev in iterate.search_events(scoped, source_id=uuid.UUID(source.id), limit=40)}
    assert len(seen) == events

    with pytest.raises(sluice_admin.ProblemError) as refused:
        get_tenant.sync(uuid.uuid4(), client=scoped)
    assert refused.value.status == 404 and refused.value.request_id
