package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
)

// grantCredits is what an eligible invoice grants (Sluice's default).
const grantCredits = 100

// grantArgs is the job of one stored invoice.paid event: what the grant
// reads, taken from the event when it was accepted.
type grantArgs struct {
	InboxID    int64  `json:"inbox_id"`
	Tenant     string `json:"tenant_id"`
	Source     string `json:"source_id"`
	Account    string `json:"source_account"`
	EventID    string `json:"event_id"`
	Invoice    string `json:"invoice_id"`
	Customer   string `json:"customer_id"`
	AmountPaid int64  `json:"amount_paid"`
	Status     string `json:"status"`
}

func (grantArgs) Kind() string { return "grant_credits" }

func grantOf(d *delivery, inboxID int64) grantArgs {
	o := d.ev.Data.Object
	return grantArgs{InboxID: inboxID, Tenant: d.src.tenant, Source: d.src.id, Account: d.src.account, EventID: d.ev.ID,
		Invoice: o.ID, Customer: o.Customer, AmountPaid: o.AmountPaid, Status: o.Status}
}

// grantSQL is the whole effect in one statement, so one transaction: the
// customer's workspace, the grant under its business key (a second event
// about the invoice, or the job run again, grants nothing), the balance
// moved and the confirmation e-mail's outbox row, both only for a new
// grant. It says whether the customer maps to a workspace.
const grantSQL = `
WITH ws AS (
    SELECT workspace_id FROM workspace_customers WHERE tenant_id = $1 AND customer_id = $2
), g AS (
    INSERT INTO credit_grants (tenant_id, workspace_id, source_id, source_account, object_id, operation,
                               credits, event_id, inbox_id)
    SELECT $1, workspace_id, $3, $4, $5, 'initial-credit-grant', $6, $7, $8 FROM ws
    ON CONFLICT ON CONSTRAINT credit_grants_business_key DO NOTHING
    RETURNING workspace_id
), moved AS (
    INSERT INTO balances AS b (workspace_id, tenant_id, credits)
    SELECT workspace_id, $1, $6 FROM g
    ON CONFLICT (workspace_id) DO UPDATE SET credits = b.credits + EXCLUDED.credits, updated_at = now()
), mail AS (
    INSERT INTO outbox (topic, key, headers, payload)
    SELECT 'notifications', convert_to($1::text || '/workspace/' || workspace_id, 'UTF8'),
           jsonb_build_object('ce_specversion', '1.0',
                              'ce_id', $1::text || '/' || $3::text || '/' || $5 || '/initial-credit-grant/confirmation-email',
                              'ce_source', '/tenants/' || $1::text || '/sources/' || $3::text,
                              'ce_type', 'email.credits_granted', 'ce_subject', workspace_id::text,
                              'ce_tenantid', $1::text, 'content-type', 'application/json'),
           convert_to(json_build_object('kind', 'credits-granted', 'workspace_id', workspace_id,
                                        'credits', $6, 'invoice_id', $5)::text, 'UTF8')
    FROM g
)
SELECT EXISTS (SELECT 1 FROM ws)`

// grantWorker applies grant jobs. River completes a job once Work returns
// nil (its completer batches the updates); a job run again after its grant
// committed finds the business key taken and changes nothing.
type grantWorker struct {
	river.WorkerDefaults[grantArgs]
	pool *pgxpool.Pool
}

func (w *grantWorker) Work(ctx context.Context, job *river.Job[grantArgs]) error {
	a := job.Args
	if a.Status != "paid" || a.AmountPaid <= 0 {
		return nil // not eligible: nothing to grant
	}
	var mapped bool
	if err := w.pool.QueryRow(ctx, grantSQL, a.Tenant, a.Customer, a.Source, a.Account, a.Invoice, grantCredits,
		a.EventID, a.InboxID).Scan(&mapped); err != nil {
		return fmt.Errorf("grant for invoice %s: %w", a.Invoice, err) // retried by River
	}
	if !mapped {
		// Permanent: no retry maps the customer.
		return river.JobCancel(fmt.Errorf("customer %s of invoice %s maps to no workspace", a.Customer, a.Invoice))
	}
	return nil
}
