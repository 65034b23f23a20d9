package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// DemoCmd shows every part of Sluice on one tenant through a running
// `sluice serve`: a signed invoice.paid to its grant, the same event id
// naming another invoice (a conflict), an invoice of a customer no
// workspace has (a dead letter), a tenant event type, an endpoint served by
// a receiver (--receiver), and a reconciliation run against a Stripe API
// (--stripe-api) that holds an invoice whose webhook never came. With
// --state the demo tenant is made once and found again by the next run,
// its source and endpoint pointed at where the fakes listen now.
type DemoCmd struct {
	URL            string        `name:"url" env:"SLUICE_INGEST_URL" default:"http://127.0.0.1:8080" help:"Base URL of the running sluice serve's public listener." input:"max=2048"`
	Timeout        time.Duration `default:"60s" help:"How long to wait for the grant."`
	State          string        `name:"state" help:"File keeping the demo tenant's ids and secrets between runs (make run: .run/demo/demo.json): the tenant it names is used again; empty: a new tenant each time." input:"max=4096"`
	StripeAPI      string        `name:"stripe-api" help:"A Stripe API for the demo source's reconciliation (make run's fake, on loopback): the source's credentials name it, and the demo reconciles the source once." input:"max=2048"`
	Receiver       string        `name:"receiver" help:"Where the demo endpoint delivers (make run's receiver, on loopback); empty: no endpoint." input:"max=2048"`
	Step           string        `name:"step" enum:"all,prepare,send" default:"all" help:"prepare: make or find the demo tenant and point it at --stripe-api and --receiver, sending nothing (make run does it before serve starts, so serve's schedule never asks an address the fake left); send: send what the tenant of --state is shown with; all: both."`
	ConsoleToken   bool          `name:"console-token" help:"Print an operate token for the console, kept in --state and made again when it has under two hours left."`
	EndpointPolicy `embed:"" group:"endpoint-policy"`
}

// Validate refuses a send step with no state to find the tenant in.
func (c *DemoCmd) Validate() error {
	if c.Step == "send" && c.State == "" {
		return errors.New("--step send sends for the tenant --state names: give --state")
	}
	return nil
}

func (c *DemoCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	var d demoState
	var err error
	if c.Step == "send" {
		d, err = loadDemo(c.State)
		if err == nil && d.TenantID == "" {
			err = fmt.Errorf("--state %s names no demo tenant: run --step prepare first", c.State)
		}
	} else {
		d, err = c.setUp(ctx, g)
	}
	if err != nil || c.Step == "prepare" {
		return err
	}
	s, done, err := g.store(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	if err := c.sendAll(ctx, s, d); err != nil {
		return err
	}
	if c.StripeAPI != "" {
		if err := c.reconcile(ctx, g, log, d.SourceID); err != nil {
			return err
		}
	}
	return c.console(ctx, g, d)
}

// sendAll sends the demo's webhooks: an invoice to its grant, the same
// event id naming another invoice (a conflict), and an invoice of a
// customer no workspace has (a dead letter).
func (c *DemoCmd) sendAll(ctx context.Context, s tenancy.Store, d demoState) error {
	ingestURL := strings.TrimRight(c.URL, "/") + "/v1/ingest/" + d.SourceID
	run := randomHex(4)
	before, err := s.Balance(ctx, d.WorkspaceID)
	if err != nil {
		return err
	}
	paid := demoInvoice("evt_demo_"+run, "in_demo_"+run, demoCustomer, 2000)
	if err := send(ctx, ingestURL, d.Secret, paid, "invoice.paid in_demo_"+run); err != nil {
		return err
	}
	if err := c.waitForGrant(ctx, s, d.WorkspaceID, before); err != nil {
		return err
	}
	other := demoInvoice("evt_demo_"+run, "in_demo_"+run+"_other", demoCustomer, 2000)
	if err := send(ctx, ingestURL, d.Secret, other, "evt_demo_"+run+" again naming another invoice (a conflict, kept aside)"); err != nil {
		return err
	}
	orphan := demoInvoice("evt_demo_"+run+"_orphan", "in_demo_"+run+"_orphan", "cus_demo_unmapped", 500)
	return send(ctx, ingestURL, d.Secret, orphan, "invoice.paid of a customer no workspace has (a dead letter)")
}

// demoInvoice is a Stripe invoice.paid event of now.
func demoInvoice(eventID, invoiceID, customer string, amount int) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","created":%d,"livemode":false,`+
		`"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":%d,"currency":"usd","status":"paid"}}}`,
		eventID, time.Now().Unix(), invoiceID, customer, amount)
}

// send posts a Stripe-signed body to the ingest URL.
func send(ctx context.Context, ingestURL, secret string, body []byte, what string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ingestURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(signature.StripeHeader, signature.SignStripe(secret, body, time.Now()))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("send webhook: %w", err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("sent signed %s: %s %s\n", what, resp.Status, bytes.TrimSpace(answer))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("webhook refused: %s", resp.Status)
	}
	return nil
}

// waitForGrant waits for the workspace's balance to pass before: the demo
// invoice's credits.
func (c *DemoCmd) waitForGrant(ctx context.Context, s tenancy.Store, workspaceID string, before int64) error {
	deadline := time.Now().Add(c.Timeout)
	for {
		credits, err := s.Balance(ctx, workspaceID)
		if err != nil {
			return err
		}
		if credits > before {
			fmt.Printf("balance    %d credits for workspace %s (ingest -> Postgres -> cdc -> Kafka -> consumer -> Postgres)\n", credits, workspaceID)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no grant after %s: is `sluice serve` running its cdc and consumers?", c.Timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// reconcile runs the demo source's reconciliation once, over the last
// hour, against --stripe-api: it finds the invoice whose webhook never
// came (unless serve's schedule found it first) and enters it like a
// webhook.
func (c *DemoCmd) reconcile(ctx context.Context, g *Globals, log *slog.Logger, sourceID string) error {
	runner, stop, err := newRunner(ctx, g, log, reconcile.Config{}.WithDefaults())
	if err != nil {
		return err
	}
	defer stop()
	rep, err := runner.Source(ctx, sourceID, provider.Window{Since: time.Now().Add(-time.Hour), Until: time.Now()})
	if err != nil {
		return fmt.Errorf("reconcile the demo source: %w", err)
	}
	recovered := rep.Corrections[reconcile.OutcomeRecovered]
	what := fmt.Sprintf("recovered %d the webhooks missed", recovered)
	if recovered == 0 && rep.Found > 0 {
		what = "each in the inbox already (serve's reconciliation schedule recovered the missed one first)"
	}
	fmt.Printf("reconciled the demo source against the fake Stripe API: run %d found %d event(s), %s\n", rep.RunID, rep.Found, what)
	return nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
