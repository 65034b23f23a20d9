package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/testevent"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"

	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/schemas"
)

// EndpointCmd groups the administration of tenants' endpoints (their
// destinations). The commands act with the database's credentials; a
// create or a change is held to the deployment's endpoint policy, read
// from the same flags and variables as the processes read it
// (EndpointPolicy: https only, public addresses only, rate 100/s,
// concurrency 20, 50 endpoints per tenant by default).
type EndpointCmd struct {
	Create       EndpointCreateCmd       `cmd:"" help:"Create an endpoint receiving a tenant's matching events; prints its id, then its signing secret (shown only once)."`
	List         EndpointListCmd         `cmd:"" help:"List endpoints (never their secrets nor header values)."`
	Get          EndpointGetCmd          `cmd:"" help:"Show an endpoint with its figures (delivered, pending, dead, oldest undelivered, last error)."`
	Update       EndpointUpdateCmd       `cmd:"" help:"Change an endpoint; flags not given stay as they are."`
	Disable      EndpointDisableCmd      `cmd:"" help:"Stop deliveries to an endpoint (they wait, pending, until it is enabled)."`
	Enable       EndpointEnableCmd       `cmd:"" help:"Deliver to an endpoint again, whatever disabled it."`
	Pause        EndpointPauseCmd        `cmd:"" help:"Stop sending to an endpoint while its deliveries keep being written (sent, in order, once it is resumed)."`
	Resume       EndpointResumeCmd       `cmd:"" help:"Send a paused endpoint what waited, in order, and what comes after."`
	Delete       EndpointDeleteCmd       `cmd:"" help:"Delete an endpoint with its secrets and every delivery to it (disable it to keep them)."`
	RotateSecret EndpointRotateSecretCmd `cmd:"" name:"rotate-secret" help:"Give an endpoint a new signing secret (printed once); the current ones keep signing for --overlap."`
	Test         EndpointTestCmd         `cmd:"" help:"Send a signed synthetic sluice.test event to an endpoint now, and print the attempt (nothing is stored)."`
}

// endpointRef names one endpoint.
type endpointRef struct {
	ID string `arg:"" name:"endpoint-id" help:"Endpoint id (from endpoint list)." input:"uuid"`
}

// endpointAction is a command on one endpoint printing what it did.
type endpointAction struct {
	Output
	endpointRef
}

// endpointSettings are the settings of a create (an update takes them
// under the same names, each optional).
type endpointSettings struct {
	URL                  string   `name:"url" required:"" help:"Where events are sent: an https URL they are POSTed to (http where the deployment allows it, --delivery-allow-http); amqps://host/vhost for --kind rabbitmq; kafka://seed-broker:port for --kind kafka; the queue URL for --kind sqs." input:"max=2048"`
	Description          string   `name:"description" help:"For people (at most 500 characters)." input:"max=500"`
	Filters              []string `name:"filter" required:"" help:"An event type to deliver: an exact name, a prefix ending in .* (stripe.invoice.*), or *; repeat for several."`
	Expression           string   `name:"expression" help:"A CEL expression over the event (id, type, source, subject, time, tenant_id, source_account, body, data): of the events the filters take, only those it yields true for (docs/destinations.md)." input:"max=2048"`
	Transformation       string   `name:"transformation" help:"A CEL expression over the event yielding a map: the JSON object sent (and signed) in place of the event's body, e.g. '{\"id\": data.object.id, \"kind\": type}' (docs/destinations.md). Tried on --transformation-sample, or else on the tenant's last event of a type the endpoint takes." input:"max=4096"`
	TransformationSample string   `name:"transformation-sample" type:"existingfile" placeholder:"FILE" help:"A JSON file holding an event body to try the transformation on."`
	Rate                 int      `name:"rate" help:"Requests per second (at most the cap); 0: the deployment's default."`
	Concurrency          int      `name:"concurrency" help:"Requests in flight (at most the cap); 0: the deployment's default."`
	Headers              []string `name:"header" placeholder:"NAME=VALUE" help:"A static header sent on every request (sealed; never shown again); repeat for several." input:"max=512"`
}

// EndpointCreateCmd creates an endpoint.
type EndpointCreateCmd struct {
	Output
	Tenant string `required:"" help:"Tenant id." input:"uuid"`
	Kind   string `name:"kind" enum:"http,rabbitmq,kafka,sqs" default:"http" help:"What events are sent to: http (a signed POST), rabbitmq (a message published, confirmed), kafka (a record produced to the tenant's cluster), sqs (a message sent to an SQS-compatible queue)."`
	endpointSettings
	targetFlags
	Unordered      bool                               `help:"Send in parallel, not in order per resource."`
	EndpointPolicy `embed:"" group:"endpoint-policy"` // policyGroup
}

func (c *EndpointCreateCmd) Run(ctx context.Context, g *Globals) error {
	headers, err := parseHeaders(c.Headers)
	if err != nil {
		return err
	}
	s, done, err := g.endpointsStore(ctx, c.EndpointPolicy)
	if err != nil {
		return err
	}
	defer done()
	settings, cred, err := c.settings()
	if err != nil {
		return err
	}
	sample, err := readSample(c.TransformationSample)
	if err != nil {
		return err
	}
	e, secret, err := s.CreateEndpoint(ctx, endpoints.New{TenantID: c.Tenant, URL: c.URL, Description: c.Description, Filters: c.Filters,
		Expression: c.Expression, Unordered: c.Unordered, Rate: c.Rate, Concurrency: c.Concurrency, Headers: headers,
		Kind: endpoints.Kind(c.Kind), Settings: settings, Credentials: cred,
		Transformation: c.Transformation, TransformationSample: sample})
	if err != nil {
		return err
	}
	if err := c.secret(e, secret, "signing secret: store it now, it is shown only once"); err != nil || c.Output.Output == "json" {
		return err
	}
	return printTrial(e.Trial)
}

// readSample reads a transformation's sample from file (none: nil).
func readSample(file string) ([]byte, error) {
	if file == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("transformation sample: %w", err)
	}
	return b, nil
}

// printTrial says, after a create or an update that set a transformation,
// what it was tried on and what it yielded.
func printTrial(t *endpoints.Trial) error {
	if t == nil {
		return nil
	}
	if t.On == endpoints.TriedOnNone {
		_, err := fmt.Println("transformation checked, not tried: the tenant has no event of the endpoint's types yet")
		return err
	}
	on := t.On
	if t.EventID != "" {
		on += " " + t.EventID
	}
	_, err := fmt.Printf("transformation tried on %s: %s\n", on, t.Output)
	return err
}

// secret prints an endpoint and the secret just made for it: the id and
// the secret alone on their lines, or one JSON object.
func (o Output) secret(e endpoints.Endpoint, secret, note string) error {
	if o.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(struct {
			endpoints.Endpoint
			Secret string `json:"secret"`
		}{e, secret})
	}
	_, err := fmt.Printf("%s\n%s\n%s\n", shown(e.ID), shown(secret), shown(note))
	return err
}

// parseHeaders reads --header NAME=VALUE flags; the store judges names
// and values (never repeating a value).
func parseHeaders(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	headers := make(map[string]string, len(flags))
	for _, f := range flags {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, errors.New("--header: want NAME=VALUE")
		}
		if _, dup := headers[name]; dup {
			return nil, fmt.Errorf("--header: %s is given twice", name)
		}
		headers[name] = value
	}
	return headers, nil
}

// EndpointListCmd lists endpoints.
type EndpointListCmd struct {
	Output
	Paging
	Tenant   string `help:"Only this tenant's endpoints." input:"uuid"`
	Disabled bool   `help:"Only disabled endpoints."`
}

func (c *EndpointListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.endpointsStore(ctx, EndpointPolicy{})
	if err != nil {
		return err
	}
	defer done()
	f := endpoints.Filter{TenantID: c.Tenant}
	if c.Disabled {
		enabled := false
		f.Enabled = &enabled
	}
	items, next, err := s.ListEndpoints(ctx, f, endpoints.Page{After: c.Cursor, Limit: int(c.Limit)})
	if err != nil {
		return err
	}
	return printList(c.Output, items, next, "ID\tTENANT\tURL\tFILTERS\tORDERED\tSTATE", func(e endpoints.Endpoint) []any {
		return []any{e.ID, e.TenantID, e.URL, strings.Join(e.Filters, ","), e.Ordered, state(e)}
	})
}

func state(e endpoints.Endpoint) string {
	if e.Enabled && e.Paused {
		return "paused"
	}
	if e.Enabled {
		return "enabled"
	}
	return "disabled (" + string(e.DisabledReason) + ")"
}

// EndpointGetCmd shows one endpoint with its figures.
type EndpointGetCmd struct{ endpointAction }

func (c *EndpointGetCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.endpointsStore(ctx, EndpointPolicy{})
	if err != nil {
		return err
	}
	defer done()
	e, err := s.GetEndpoint(ctx, c.ID)
	if err != nil {
		return err
	}
	st, err := s.Stats(ctx, c.ID)
	if err != nil {
		return err
	}
	pending := fmt.Sprint(st.Pending)
	if st.PendingAtLeast {
		pending = "at least " + pending
	}
	v := struct {
		endpoints.Endpoint
		Figures endpoints.Stats `json:"figures"`
	}{e, st}
	return printOne(c.Output, v, e.ID,
		field{"tenant", e.TenantID}, field{"kind", e.Kind}, field{"url", e.URL}, field{"description", orDash(e.Description)},
		field{"filters", strings.Join(e.Filters, ",")}, field{"expression", orDash(e.Expression)},
		field{"transformation", orDash(e.Transformation)}, field{"rules version", e.RulesVersion},
		field{"ordered", e.Ordered}, field{"rate", perDefault(e.RatePerSecond)},
		field{"concurrency", perDefault(e.Concurrency)}, field{"headers", orDash(strings.Join(e.Headers, ","))},
		field{"state", state(e)}, field{"active secrets", e.ActiveSecrets},
		field{"delivered", fmt.Sprintf("%d of the newest %d", st.Delivered, st.Window)}, field{"dead", st.Dead}, field{"pending", pending},
		field{"oldest pending", (time.Duration(st.OldestPendingAgeSeconds) * time.Second).String()},
		field{"last error", orDash(st.LastError)})
}

func perDefault(n *int) string {
	if n == nil {
		return "(deployment default)"
	}
	return fmt.Sprint(*n)
}

// EndpointUpdateCmd changes an endpoint.
type EndpointUpdateCmd struct {
	Output
	endpointRef
	URL                  *string  `name:"url" help:"A new URL: https, or http where the deployment allows it (--delivery-allow-http)." input:"max=2048"`
	Description          *string  `name:"description" help:"A new description; empty clears it." input:"max=500"`
	Filters              []string `name:"filter" help:"Replace the filters; repeat for several."`
	Expression           *string  `name:"expression" help:"Replace the filter expression; empty removes it." input:"max=2048"`
	Transformation       *string  `name:"transformation" help:"Replace the transformation (checked, then tried as at creation); empty removes it. A change of it or of the expression is the rules' next version." input:"max=4096"`
	TransformationSample string   `name:"transformation-sample" type:"existingfile" placeholder:"FILE" help:"A JSON file holding an event body to try the new transformation on."`
	Rate                 *int     `name:"rate" help:"A new rate; 0: the deployment's default."`
	Concurrency          *int     `name:"concurrency" help:"A new concurrency; 0: the deployment's default."`
	Headers              []string `name:"header" placeholder:"NAME=VALUE" xor:"headers" help:"Replace every static header; repeat for several." input:"max=512"`
	ClearHeaders         bool     `name:"clear-headers" xor:"headers" help:"Remove every static header."`
	Unordered            bool     `xor:"order" help:"Send in parallel from now on."`
	Ordered              bool     `xor:"order" help:"Send in order per resource from now on."`
	// targetFlags, when any is given, replace a rabbitmq or kafka
	// endpoint's settings (and its credentials, with --target-user).
	targetFlags
	EndpointPolicy `embed:"" group:"endpoint-policy"` // policyGroup
}

func (c *EndpointUpdateCmd) Run(ctx context.Context, g *Globals) error {
	p, err := c.patch()
	if err != nil {
		return err
	}
	s, done, err := g.endpointsStore(ctx, c.EndpointPolicy)
	if err != nil {
		return err
	}
	defer done()
	e, err := s.UpdateEndpoint(ctx, c.ID, p)
	if err != nil {
		return err
	}
	if err := printEndpoint(c.Output, e, "updated"); err != nil || c.Output.Output == "json" {
		return err
	}
	return printTrial(e.Trial)
}

func (c *EndpointUpdateCmd) patch() (endpoints.Patch, error) {
	p := endpoints.Patch{URL: c.URL, Description: c.Description, Filters: c.Filters, Expression: c.Expression, Rate: c.Rate, Concurrency: c.Concurrency,
		Transformation: c.Transformation}
	var err error
	if p.TransformationSample, err = readSample(c.TransformationSample); err != nil {
		return p, err
	}
	// kong refuses --ordered with --unordered, and --header with
	// --clear-headers (xor), before this runs.
	if c.Ordered || c.Unordered {
		p.Ordered = &c.Ordered
	}
	if c.ClearHeaders || len(c.Headers) > 0 {
		headers, err := parseHeaders(c.Headers)
		if err != nil {
			return p, err
		}
		if headers == nil {
			headers = map[string]string{}
		}
		p.Headers = &headers
	}
	if c.targetFlags.given() {
		settings, cred, err := c.settings()
		if err != nil {
			return p, err
		}
		p.Settings, p.Credentials = &settings, cred
	}
	return p, nil
}

// printEndpoint prints an endpoint after a change: its id and what was
// done, or its JSON.
func printEndpoint(o Output, e endpoints.Endpoint, done string) error {
	return printOne(o, e, e.ID, field{"state", state(e)}, field{"done", done})
}

// EndpointDisableCmd disables an endpoint.
type EndpointDisableCmd struct{ endpointAction }

func (c *EndpointDisableCmd) Run(ctx context.Context, g *Globals) error {
	return c.change(ctx, g, c.ID, endpoints.Store.DisableEndpoint, "disabled: its deliveries wait until it is enabled")
}

// EndpointEnableCmd enables an endpoint.
type EndpointEnableCmd struct{ endpointAction }

func (c *EndpointEnableCmd) Run(ctx context.Context, g *Globals) error {
	return c.change(ctx, g, c.ID, endpoints.Store.EnableEndpoint, "enabled: the deliverer sends to it within 5s")
}

// EndpointPauseCmd pauses an endpoint.
type EndpointPauseCmd struct{ endpointAction }

func (c *EndpointPauseCmd) Run(ctx context.Context, g *Globals) error {
	return c.change(ctx, g, c.ID, endpoints.Store.PauseEndpoint, "paused: its deliveries are written and wait, in order, until it is resumed")
}

// EndpointResumeCmd resumes a paused endpoint.
type EndpointResumeCmd struct{ endpointAction }

func (c *EndpointResumeCmd) Run(ctx context.Context, g *Globals) error {
	return c.change(ctx, g, c.ID, endpoints.Store.ResumeEndpoint, "resumed: the deliverer sends what waited, in order, within 5s")
}

func (o Output) change(ctx context.Context, g *Globals, id string, do func(endpoints.Store, context.Context, string) (endpoints.Endpoint, error), done string) error {
	s, closeStore, err := g.endpointsStore(ctx, EndpointPolicy{})
	if err != nil {
		return err
	}
	defer closeStore()
	e, err := do(s, ctx, id)
	if err != nil {
		return err
	}
	return printEndpoint(o, e, done)
}

// EndpointDeleteCmd deletes an endpoint.
type EndpointDeleteCmd struct{ endpointAction }

func (c *EndpointDeleteCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.endpointsStore(ctx, EndpointPolicy{})
	if err != nil {
		return err
	}
	defer done()
	if err := s.DeleteEndpoint(ctx, c.ID); err != nil {
		return err
	}
	return c.print(c.ID, map[string]any{"deleted": true}, "deleted, with its secrets and every delivery to it")
}

// EndpointRotateSecretCmd rotates an endpoint's signing secret.
type EndpointRotateSecretCmd struct {
	Output
	endpointRef
	Overlap time.Duration `default:"24h" help:"How long the current secrets keep signing beside the new one (0: they stop at once; at most 720h)."`
}

func (c *EndpointRotateSecretCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.endpointsStore(ctx, EndpointPolicy{})
	if err != nil {
		return err
	}
	defer done()
	secret, expires, err := s.RotateSecret(ctx, c.ID, c.Overlap)
	if err != nil {
		return err
	}
	e, err := s.GetEndpoint(ctx, c.ID)
	if err != nil {
		return err
	}
	return c.secret(e, secret, "new signing secret, shown only once; the old ones sign until "+expires.UTC().Format(time.RFC3339))
}

// EndpointTestCmd sends a test event from this process, as the deliverer
// of a running sluice does for POST /admin/v1/endpoints/{id}/test: signed
// with the endpoint's secrets, dialled under the deployment's policy.
type EndpointTestCmd struct {
	Output
	endpointRef
	Timeout        time.Duration                      `name:"delivery-timeout" env:"SLUICE_DELIVERY_TIMEOUT" default:"15s" help:"Bound of the request, its answer included."`
	Type           string                             `name:"type" help:"Send an event of this type (kind.type, as filters name it: stripe.invoice.paid): the tenant's last event of the type, masked, or a minimal example of its schema; default: the synthetic sluice.test."`
	EndpointPolicy `embed:"" group:"endpoint-policy"` // policyGroup
}

// example is the test event --type names (the zero one: sluice.test).
func (c *EndpointTestCmd) example(ctx context.Context, g *Globals, pool *pgxpool.Pool, tenant string) (testevent.Example, error) {
	if c.Type == "" || c.Type == endpoints.SyntheticTestType {
		return testevent.Synthetic(), nil
	}
	builtin, err := schemas.Load(g.eventTypes()...)
	if err != nil {
		return testevent.Example{}, err
	}
	types, err := catalog.New(pool, g.catalog())
	if err != nil {
		return testevent.Example{}, err
	}
	return testevent.Builder{Pool: pool, Builtin: builtin, Types: types}.Build(ctx, tenant, c.Type)
}

func (c *EndpointTestCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	s, done, err := g.endpointsStore(ctx, c.EndpointPolicy)
	if err != nil {
		return err
	}
	defer done()
	policy, err := c.policy()
	if err != nil {
		return err
	}
	cfg := delivery.Config{Client: egress.NewClient(egress.Config{Policy: policy, Timeout: c.Timeout}), Timeout: c.Timeout,
		Dial:       egress.NewDialer(egress.Config{Policy: policy}).DialContext,
		Registerer: prometheus.NewRegistry()}
	tenant, err := s.TenantOf(ctx, c.ID)
	if err != nil {
		return err
	}
	ex, err := c.example(ctx, g, s.Pool, tenant)
	if err != nil {
		return err
	}
	a, err := delivery.New(cfg, log, s.Pool, s).TestEndpoint(ctx, c.ID, ex.Event())
	if err != nil {
		return err
	}
	if err := (&audit.Actor{}).Record(ctx, s.Pool, audit.Target{Action: "endpoint.test", Resource: "endpoint", ID: c.ID, TenantID: tenant}); err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(a)
	}
	outcome := fmt.Sprintf("answered %d", a.Status)
	if a.OK() && a.Status == 0 {
		outcome = "confirmed" // a rabbitmq or kafka target
	}
	if a.Error != "" {
		outcome = "failed (" + a.ErrorClass + "): " + a.Error
	}
	if a.ErrorClass == "refused_address" {
		outcome += " (this deployment dials only public addresses and those of --delivery-allow-networks)"
	}
	_, err = fmt.Printf("sent %s (%s) to endpoint %s: %s in %d ms\n", ex.Type, testFrom(ex), c.ID, shown(outcome), a.LatencyMS)
	if err == nil && !a.OK() {
		return fmt.Errorf("endpoint %s did not accept the test event", c.ID)
	}
	return err
}

// testFrom says where a test event's body came from.
func testFrom(ex testevent.Example) string {
	switch ex.From {
	case testevent.FromLastEvent:
		return fmt.Sprintf("the tenant's last event of the type, %s, %d strings masked", ex.EventID, len(ex.Masked))
	case testevent.FromSchema:
		return "a minimal example of its schema: the tenant has no event of the type"
	}
	return "synthetic"
}
