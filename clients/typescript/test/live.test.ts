// Drives a live Sluice (SLUICE_ADMIN_URL, SLUICE_INGEST_URL, SLUICE_ADMIN_TOKEN:
// command/internal/cli's TestTypeScriptClientDrivesTheAdminAPI starts one).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdminClient, iterate, ProblemError } from "../src/index.js";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is unset: this test drives a live Sluice`);
  return v;
};

/** Signs body as Stripe does: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">. */
function stripeSignature(secret: string, body: string): string {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${body}`).digest("hex")}`;
}

function invoicePaid(id: string, customer: string): string {
  return JSON.stringify({ id, object: "event", type: "invoice.paid", created: Math.floor(Date.now() / 1000),
    data: { object: { id: `in_${id}`, object: "invoice", customer, amount_paid: 0, currency: "usd", status: "paid" } } });
}

test("the TypeScript client drives the admin API", async () => {
  const admin = createAdminClient({ baseUrl: env("SLUICE_ADMIN_URL"), token: env("SLUICE_ADMIN_TOKEN") });
  const events = Number(env("SLUICE_CLIENT_EVENTS"));
  const s = randomBytes(6).toString("hex");

  const key = `tenant-${s}`;
  const first = await admin.POST("/admin/v1/tenants", { params: { header: { "Idempotency-Key": key } }, body: { name: `ts-${s}` } });
  const again = await admin.POST("/admin/v1/tenants", { params: { header: { "Idempotency-Key": key } }, body: { name: `ts-${s}` } });
  assert.equal(again.data!.id, first.data!.id, "the create sent again under its key made another tenant");
  const tenant = first.data!.id;

  const secret = `whsec_${s}${s}`;
  const source = await admin.POST("/admin/v1/sources", { body: { tenant_id: tenant, kind: "stripe", account: `acct_${s}`, secret } });

  let received = 0;
  const receiver = createServer((req, res) => { received++; req.resume(); res.writeHead(204).end(); });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const endpoint = await admin.POST("/admin/v1/tenants/{tenant_id}/endpoints", {
      params: { path: { tenant_id: tenant } }, body: { url, filters: ["*"] } });
    const token = await admin.POST("/admin/v1/admin-tokens", { body: { role: "read", tenant_id: tenant } });
    const scoped = createAdminClient({ baseUrl: env("SLUICE_ADMIN_URL"), token: token.data!.token });

    const send = async (id: string) => {
      const body = invoicePaid(id, `cus_${s}`);
      const res = await fetch(`${env("SLUICE_INGEST_URL")}/v1/ingest/${source.data!.id}`, {
        method: "POST", body, headers: { "Content-Type": "application/json", "Stripe-Signature": stripeSignature(secret, body) } });
      assert.equal(res.status, 202, `webhook ${id}`);
    };
    await send(`evt_${s}`);
    const deadline = Date.now() + 60_000;
    for (;;) {
      let delivered = 0;
      for await (const d of iterate.listDeliveries(scoped, { endpoint_id: endpoint.data!.id, state: "delivered" })) {
        if (d.event_id === `evt_${s}`) delivered++;
      }
      if (delivered > 0) break;
      assert.ok(Date.now() < deadline, "no delivery of the endpoint delivered within a minute");
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(received > 0, "the delivery is delivered and the receiver got nothing");

    for (let i = 1; i < events; i++) await send(`evt_${s}_${i}`);
    const seen = new Set<string>();
    for await (const ev of iterate.searchEvents(scoped, { source_id: source.data!.id, limit: 40 })) seen.add(ev.event_id);
    assert.equal(seen.size, events);

    await assert.rejects(
      scoped.GET("/admin/v1/tenants/{tenant_id}", { params: { path: { tenant_id: crypto.randomUUID() } } }),
      (err: unknown) => err instanceof ProblemError && err.status === 404 && !!err.problem.request_id,
    );
  } finally {
    receiver.close();
  }
});
