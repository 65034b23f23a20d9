package command

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// DemoCmd sets up a demo tenant and sends one signed invoice.paid through a
// running `sluice serve`, then waits for the credit grant it causes.
type DemoCmd struct {
	URL     string        `name:"url" default:"http://127.0.0.1:8080" help:"Base URL of a running sluice serve." input:"max=2048"`
	Timeout time.Duration `default:"60s" help:"How long to wait for the grant."`
}

func (c *DemoCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, true)
	if err != nil {
		return err
	}
	defer done()
	suffix := randomHex(4)
	secret := "whsec_" + randomHex(24)
	tenantID, err := s.CreateTenant(ctx, "demo-"+suffix)
	if err != nil {
		return err
	}
	sourceID, err := s.CreateSource(ctx, tenancy.NewSource{TenantID: tenantID, Kind: "stripe", Account: "acct_demo_" + suffix, Secret: secret})
	if err != nil {
		return err
	}
	customer := "cus_demo_" + suffix
	workspaceID, err := s.CreateWorkspace(ctx, tenantID, customer, "Demo workspace")
	if err != nil {
		return err
	}
	ingestURL := strings.TrimRight(c.URL, "/") + "/v1/ingest/" + sourceID
	fmt.Printf("tenant     %s\nsource     %s (stripe, secret %s)\nworkspace  %s (customer %s)\ningest URL %s\n",
		tenantID, sourceID, secret, workspaceID, customer, ingestURL)

	body := fmt.Appendf(nil, `{"id":"evt_demo_%s","object":"event","type":"invoice.paid","created":%d,"livemode":false,`+
		`"data":{"object":{"id":"in_demo_%s","object":"invoice","customer":"%s","amount_paid":2000,"currency":"usd","status":"paid"}}}`,
		suffix, time.Now().Unix(), suffix, customer)
	if err := send(ctx, ingestURL, secret, body, "invoice.paid in_demo_"+suffix); err != nil {
		return err
	}
	if err := c.waitForGrant(ctx, s, workspaceID); err != nil {
		return err
	}
	// Something for each page of the console (/console): an invoice whose
	// customer maps to no workspace (a dead letter of sluice.credits), and
	// the first event again with other content (a conflict).
	orphan := fmt.Appendf(nil, `{"id":"evt_demo_%s_orphan","object":"event","type":"invoice.paid","created":%d,"livemode":false,`+
		`"data":{"object":{"id":"in_demo_%s_orphan","object":"invoice","customer":"cus_demo_%s_unmapped","amount_paid":500,"currency":"usd","status":"paid"}}}`,
		suffix, time.Now().Unix(), suffix, suffix)
	if err := send(ctx, ingestURL, secret, orphan, "invoice.paid for an unmapped customer (a dead letter)"); err != nil {
		return err
	}
	changed := bytes.Replace(body, []byte(`"amount_paid":2000`), []byte(`"amount_paid":2500`), 1)
	return send(ctx, ingestURL, secret, changed, "evt_demo_"+suffix+" again with another amount (a conflict)")
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

// waitForGrant waits for the demo invoice's credits.
func (c *DemoCmd) waitForGrant(ctx context.Context, s tenancy.Store, workspaceID string) error {
	deadline := time.Now().Add(c.Timeout)
	for {
		credits, err := s.Balance(ctx, workspaceID)
		if err != nil {
			return err
		}
		if credits > 0 {
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

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
