package cli

// The demo tenant, made once and found again: its ids and secrets are kept
// in a file (--state), so a second make run uses the same tenant, source,
// workspace, event type and endpoint, and only points the source's
// credentials and the endpoint at where the fakes listen now.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// demoCustomer is the Stripe customer the demo workspace is mapped from;
// customers are a tenant's own, so every demo tenant may use it.
const demoCustomer = "cus_demo"

// demoState is what --state keeps of the demo tenant.
type demoState struct {
	TenantID    string `json:"tenant_id"`
	SourceID    string `json:"source_id"`
	Secret      string `json:"source_secret"`
	WorkspaceID string `json:"workspace_id"`
	EndpointID  string `json:"endpoint_id,omitempty"`
	// ConsoleToken is an operate token for the console, made again when
	// it has less than consoleTokenMargin left.
	ConsoleToken string `json:"console_token,omitempty"`
}

// Console tokens of the demo: a day long, made again with under two hours
// left, so one make run after another signs in with the same.
const (
	consoleTokenTTL    = 24 * time.Hour
	consoleTokenMargin = 2 * time.Hour
)

// loadDemo reads path; a file not there yet is an empty state.
func loadDemo(path string) (demoState, error) {
	var d demoState
	if path == "" {
		return d, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, fmt.Errorf("--state: %w", err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("--state %s: %w (remove it to make a new demo tenant)", path, err)
	}
	return d, nil
}

// saveDemo writes d to path, readable by its owner only (it holds
// secrets), whole or not at all.
func saveDemo(path string, d demoState) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// setUp makes the demo tenant, or finds the one --state names, and points
// it at --stripe-api and --receiver; the state is saved and summed up.
func (c *DemoCmd) setUp(ctx context.Context, g *Globals) (demoState, error) {
	d, err := loadDemo(c.State)
	if err != nil {
		return d, err
	}
	s, done, err := g.store(ctx, true)
	if err != nil {
		return d, err
	}
	defer done()
	made, err := c.tenant(ctx, s, &d)
	if err != nil {
		return d, err
	}
	if err := saveDemo(c.State, d); err != nil {
		return d, err
	}
	origin := "made now"
	if !made {
		origin = "the one " + c.State + " names"
	}
	fmt.Printf("tenant     %s (demo, %s)\nsource     %s (stripe, account acct_demo, signing secret %s)\nworkspace  %s (customer %s)\n",
		d.TenantID, origin, d.SourceID, d.Secret, d.WorkspaceID, demoCustomer)
	if err := c.eventType(ctx, g, d.TenantID); err != nil {
		return d, err
	}
	if err := c.pointSource(ctx, s, d.SourceID); err != nil {
		return d, err
	}
	if err := c.endpoint(ctx, g, &d); err != nil {
		return d, err
	}
	return d, saveDemo(c.State, d)
}

// tenant finds the demo tenant, source and workspace d names, or makes
// them (made): a state naming a tenant that is gone (a new database) is
// made again.
func (c *DemoCmd) tenant(ctx context.Context, s tenancy.Store, d *demoState) (made bool, err error) {
	if d.TenantID != "" {
		_, err := s.Tenant(ctx, d.TenantID)
		if err == nil {
			_, err = s.Source(ctx, d.SourceID)
		}
		if err == nil {
			_, err = s.Workspace(ctx, d.WorkspaceID)
		}
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, refusal.ErrNotFound) {
			return false, err
		}
	}
	*d = demoState{Secret: "whsec_" + randomHex(24)}
	if d.TenantID, err = s.CreateTenant(ctx, "demo"); err != nil {
		return false, err
	}
	if d.SourceID, err = s.CreateSource(ctx, tenancy.NewSource{TenantID: d.TenantID, Kind: "stripe", Account: "acct_demo", Secret: d.Secret}); err != nil {
		return false, err
	}
	d.WorkspaceID, err = s.CreateWorkspace(ctx, d.TenantID, demoCustomer, "Demo workspace")
	return true, err
}

// demoSchema is the demo tenant's own event type: an order, by its id.
const demoSchema = `{"type":"object","required":["id"],"properties":{"id":{"type":"string"},"total":{"type":"integer"}}}`

// eventType declares the tenant's order.placed, once (the same spec again
// changes nothing).
func (c *DemoCmd) eventType(ctx context.Context, g *Globals, tenantID string) error {
	types, done, err := g.catalogStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	created, err := types.Create(ctx, catalog.Spec{TenantID: tenantID, Kind: "api", Type: "order.placed", Schema: []byte(demoSchema),
		ObjectID: "/id", ResourceType: "order", Compatible: true})
	if err != nil {
		return fmt.Errorf("the demo's event type: %w", err)
	}
	fmt.Printf("event type api order.placed v%d (its own type, POST /v1/events; topic %s)\n", created.Version, created.Topic)
	return nil
}

// pointSource gives the demo source API credentials naming --stripe-api,
// unless they name it already.
func (c *DemoCmd) pointSource(ctx context.Context, s tenancy.Store, sourceID string) error {
	if c.StripeAPI == "" {
		return nil
	}
	want := fmt.Appendf(nil, `{"secret_key":"rk_test_demo","api_base":%q}`, c.StripeAPI)
	var stored struct {
		APIBase string `json:"api_base"`
	}
	if _, creds, err := s.APICredentials(ctx, sourceID); err == nil && json.Unmarshal(creds, &stored) == nil && stored.APIBase == c.StripeAPI {
		fmt.Printf("stripe API %s (a fake: the source's reconciliation asks it)\n", c.StripeAPI)
		return nil
	}
	if err := s.SetAPICredentials(ctx, sourceID, want); err != nil {
		return fmt.Errorf("point the demo source at %s: %w", c.StripeAPI, err)
	}
	fmt.Printf("stripe API %s (a fake: the source's reconciliation asks it; credentials set now)\n", c.StripeAPI)
	return nil
}

// endpoint makes the demo endpoint, delivering the tenant's invoices to
// --receiver, or points the one d names there (enabled).
func (c *DemoCmd) endpoint(ctx context.Context, g *Globals, d *demoState) error {
	if c.Receiver == "" {
		return nil
	}
	s, done, err := g.endpointsStore(ctx, c.EndpointPolicy)
	if err != nil {
		return err
	}
	defer done()
	e, err := s.GetEndpoint(ctx, d.EndpointID)
	switch {
	case d.EndpointID == "" || errors.Is(err, refusal.ErrNotFound):
		e, _, err = s.CreateEndpoint(ctx, endpoints.New{TenantID: d.TenantID, URL: c.Receiver, Filters: []string{"stripe.invoice.*"},
			Description: "make run's demo receiver, on loopback"})
	case err == nil && e.URL != c.Receiver:
		e, err = s.UpdateEndpoint(ctx, e.ID, endpoints.Patch{URL: &c.Receiver})
	}
	if err == nil && !e.Enabled {
		e, err = s.EnableEndpoint(ctx, e.ID)
	}
	if err != nil {
		return fmt.Errorf("the demo endpoint: %w", err)
	}
	d.EndpointID = e.ID
	fmt.Printf("endpoint   %s -> %s (stripe.invoice.*; the receiver refuses its first request, so one delivery retries)\n", e.ID, e.URL)
	return nil
}

// console prints an operate token for the console, kept in the state
// while it has a while left.
func (c *DemoCmd) console(ctx context.Context, g *Globals, d demoState) error {
	if !c.ConsoleToken {
		return nil
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	tokens := admintoken.Store{Pool: pool, Actor: &audit.Actor{}}
	t, err := tokens.Authenticate(ctx, d.ConsoleToken)
	if err != nil || t.ExpiresAt != nil && time.Until(*t.ExpiresAt) < consoleTokenMargin {
		if t, d.ConsoleToken, err = tokens.Create(ctx, admintoken.New{Name: "make run console", Role: admintoken.RoleOperate, TTL: consoleTokenTTL}); err != nil {
			return err
		}
		if err := saveDemo(c.State, d); err != nil {
			return err
		}
	}
	until := "no expiry"
	if t.ExpiresAt != nil {
		until = "until " + t.ExpiresAt.UTC().Format(time.RFC3339)
	}
	fmt.Printf("console    token %s (operate, %s)\n", d.ConsoleToken, until)
	return nil
}
