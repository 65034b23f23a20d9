package floor

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Customer is a mapped customer of the credits handler.
type Customer struct {
	Tenant, Workspace, Customer, Source, Account string
}

// grantCredits is what a paid invoice grants (the handler's default).
const grantCredits = 100

// CreditsScript is a pgbench script of one credits transaction per run: the
// statements the credits handler runs for a batch of paid invoices whose
// grants are of grants (one per customer given, new invoices every run),
// the e-mail intents of the grants (the second-hop outbox rows on
// notifications) and the balances moved, in one transaction. Run it with
// -M prepared: the batch's constant columns are parsed once per
// connection, as the handler's parameters are encoded once per batch; the
// headers are cast to jsonb on every run, as Postgres reads the handler's.
func CreditsScript(grants []Customer, invoicesTopic, notificationsTopic string) string {
	n := len(grants)
	col := func(f func(c Customer) string) string {
		vals := make([]string, n)
		for i, c := range grants {
			vals[i] = `"` + f(c) + `"`
		}
		return "'{" + strings.Join(vals, ",") + "}'"
	}
	seq := func(expr string) string {
		return fmt.Sprintf("(SELECT array_agg(%s ORDER BY g) FROM generate_series(1, %d) g)", expr, n)
	}
	// The e-mails' headers and payloads: built here, like the handler
	// builds them, so Postgres only parses and stores them.
	headers, payloads, keys := make([]string, n), make([]string, n), make([]string, n)
	for i, c := range grants {
		key := c.Tenant + "/workspace/" + c.Workspace
		idem := fmt.Sprintf("%s/%s/invoice-%d/%s/confirmation-email", c.Tenant, c.Source, i, "initial-credit-grant")
		h := fmt.Sprintf(`{"ce_id":%q,"ce_partitionkey":%q,"ce_source":%q,"ce_sourceaccount":%q,"ce_specversion":"1.0",`+
			`"ce_subject":%q,"ce_tenantid":%q,"ce_type":"sluice.email.credits_granted","content-type":"application/json",`+
			`"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
			idem, key, "/tenants/"+c.Tenant+"/sources/"+c.Source, c.Account, c.Workspace, c.Tenant)
		headers[i] = strconv.Quote(h)
		payloads[i] = `"\\x` + fmt.Sprintf("%x", fmt.Sprintf(`{"kind":"credits-granted","idempotency_key":%q,"tenant_id":%q,"workspace_id":%q,"credits": %d,"invoice_id":"in_%d"}`,
			idem, c.Tenant, c.Workspace, grantCredits, i)) + `"`
		keys[i] = `"\\x` + fmt.Sprintf("%x", key) + `"`
	}
	// The balances: one row per workspace, in workspace order.
	moved := map[string]Customer{}
	for _, c := range grants {
		moved[c.Workspace] = c
	}
	var ws, ts, cs []string
	for _, w := range slices.Sorted(func(yield func(string) bool) {
		for k := range moved {
			if !yield(k) {
				return
			}
		}
	}) {
		credits := 0
		for _, c := range grants {
			if c.Workspace == w {
				credits += grantCredits
			}
		}
		ws, ts, cs = append(ws, w), append(ts, moved[w].Tenant), append(cs, strconv.Itoa(credits))
	}
	var sb strings.Builder
	sb.WriteString("\\set n random(1, 2000000000)\nBEGIN;\n")
	fmt.Fprintf(&sb, `SELECT k.n, c.workspace_id::text
FROM unnest(%s::uuid[], %s::text[]) WITH ORDINALITY AS k(tenant_id, customer_id, n)
CROSS JOIN LATERAL (SELECT workspace_id FROM workspace_customers
    WHERE workspace_customers.tenant_id = k.tenant_id AND workspace_customers.customer_id = k.customer_id LIMIT 1) c;
`, col(func(c Customer) string { return c.Tenant }), col(func(c Customer) string { return c.Customer }))
	fmt.Fprintf(&sb, `WITH input AS (
    SELECT * FROM unnest(%s::uuid[], %s::uuid[], %s::uuid[], %s::text[], %s, %s, array_fill(NULL::bigint, ARRAY[%d]),
                         array_fill('%s'::text, ARRAY[%d]), %s, %s)
        WITH ORDINALITY AS t(tenant_id, workspace_id, source_id, source_account, object_id, event_id, inbox_id,
                             kafka_topic, kafka_partition, kafka_offset, n)
), g AS (
    INSERT INTO credit_grants (tenant_id, workspace_id, source_id, source_account, object_id,
                               operation, credits, event_id, inbox_id, kafka_topic, kafka_partition, kafka_offset)
    SELECT tenant_id, workspace_id, source_id, source_account, object_id, 'initial-credit-grant', %d, event_id, inbox_id,
           kafka_topic, kafka_partition, kafka_offset
    FROM input
    WHERE NOT EXISTS (SELECT 1 FROM credit_reversals r
                      WHERE r.source_id = input.source_id AND r.source_account = input.source_account
                        AND r.object_id = input.object_id AND r.operation = 'refund'
                      OFFSET 0)
    ORDER BY source_id, source_account, object_id
    ON CONFLICT ON CONSTRAINT credit_grants_business_key DO NOTHING
    RETURNING source_id, source_account, object_id
)
SELECT input.n FROM g JOIN input USING (source_id, source_account, object_id);
`, col(func(c Customer) string { return c.Tenant }), col(func(c Customer) string { return c.Workspace }),
		col(func(c Customer) string { return c.Source }), col(func(c Customer) string { return c.Account }),
		seq("'in_' || :n || '_' || g"), seq("'evt_' || :n || '_' || g"), n, invoicesTopic, n,
		seq("(g % 12)::int"), seq(":n::bigint * 10000 + g"), grantCredits)
	fmt.Fprintf(&sb, `INSERT INTO outbox (topic, key, headers, payload)
SELECT topic, key, headers, payload
FROM unnest(array_fill('%s'::text, ARRAY[%d]), '{%s}'::bytea[], (SELECT array_agg(h::jsonb) FROM unnest('{%s}'::text[]) h),
            '{%s}'::bytea[]) WITH ORDINALITY AS t(topic, key, headers, payload, n)
ORDER BY n;
`, notificationsTopic, n, strings.Join(keys, ","), strings.Join(headers, ","), strings.Join(payloads, ","))
	fmt.Fprintf(&sb, `INSERT INTO balances AS b (workspace_id, tenant_id, credits)
SELECT w, t, c FROM unnest('{%s}'::uuid[], '{%s}'::uuid[], '{%s}'::bigint[]) AS d(w, t, c) ORDER BY w
ON CONFLICT (workspace_id) DO UPDATE SET credits = b.credits + EXCLUDED.credits, updated_at = now();
COMMIT;
`, strings.Join(ws, ","), strings.Join(ts, ","), strings.Join(cs, ","))
	// pgbench reads one statement per line unless it ends with a
	// semicolon: the statements above span lines and end with one.
	return sb.String()
}
