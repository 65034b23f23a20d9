package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
)

// DisabledReason says why an endpoint is disabled.
type DisabledReason string

const (
	// ReasonOperator: an operator (or the tenant's token) disabled it.
	ReasonOperator DisabledReason = "operator"
	// ReasonGone: the endpoint answered 410 Gone.
	ReasonGone DisabledReason = "gone"
	// ReasonFailing: every attempt failed for the deployment's failing
	// horizon.
	ReasonFailing DisabledReason = "failing"
)

// Endpoint is a tenant's destination as people see it: never its secrets
// nor its headers' values, only the headers' names.
type Endpoint struct {
	ID       string `json:"id" doc:"Endpoint id."`
	TenantID string `json:"tenant_id"`
	URL      string `json:"url" doc:"Where the tenant's matching events are sent: an https URL they are POSTed to, an amqps:// server (rabbitmq) or a kafka:// seed broker (kafka)."`
	Kind     Kind   `json:"kind" enum:"http,rabbitmq,kafka,sqs" doc:"What the events are sent to: http (a signed POST), rabbitmq (a message published to an exchange, confirmed), kafka (a record produced to a topic of the tenant's cluster) or sqs (a message sent to an SQS-compatible queue)."`
	// Settings are a rabbitmq, kafka or sqs endpoint's; absent for http.
	Settings *TargetSettings `json:"settings,omitempty" doc:"The rabbitmq, kafka or sqs target's settings; absent for http."`
	// HasCredentials: the target authenticates with sealed credentials.
	HasCredentials bool     `json:"has_credentials" doc:"true: the target is authenticated with credentials, sealed and never shown."`
	Description    string   `json:"description"`
	Filters        []string `json:"filters" nullable:"false" doc:"Event types delivered: exact names, prefixes ending in .* (stripe.invoice.*), or *."`
	Expression     string   `json:"expression,omitempty" doc:"A CEL expression over the event (id, type, source, subject, time, tenant_id, source_account, body, data): of the events its filters name, the endpoint takes those it yields true for. Absent: all of them."`
	Transformation string   `json:"transformation,omitempty" doc:"A CEL expression over the event yielding a map: the JSON object sent (and signed) in place of the event's body. Absent: the body as received."`
	RulesVersion   int64    `json:"rules_version" doc:"The version of the endpoint's rules, its expression and its transformation together: 1 at creation, the next at every change of either."`
	// Trial is what the transformation made of an event when it was set:
	// filled by a create or an update that sets one, never by a read.
	Trial         *Trial `json:"transformation_trial,omitempty" doc:"What the transformation yielded when it was set, and over what (create and update only)."`
	Ordered       bool   `json:"ordered" doc:"true: an event waits until every earlier one of its resource is delivered (or given up)."`
	RatePerSecond *int   `json:"rate_per_second,omitempty" doc:"Requests per second; absent: the deployment's default."`
	Concurrency   *int   `json:"concurrency,omitempty" doc:"Requests in flight; absent: the deployment's default."`
	// Headers are the static headers' names; their values are sealed and
	// never shown.
	Headers        []string       `json:"headers" nullable:"false" doc:"Names of the static headers sent on every request (their values are never shown)."`
	Enabled        bool           `json:"enabled"`
	DisabledReason DisabledReason `json:"disabled_reason,omitempty" enum:"operator,gone,failing" doc:"Why it is disabled: operator, gone (it answered 410) or failing (every attempt failed for the failing horizon)."`
	DisabledAt     *time.Time     `json:"disabled_at,omitempty"`
	Paused         bool           `json:"paused" doc:"true: its deliveries are written but none is sent until it is resumed."`
	PausedAt       *time.Time     `json:"paused_at,omitempty"`
	FailingSince   *time.Time     `json:"failing_since,omitempty" doc:"The first failure of the current streak; absent once an attempt succeeds."`
	ActiveSecrets  int            `json:"active_secrets" doc:"Secrets signing every request now (several during a rotation's overlap)."`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
}

// New is an endpoint to create. Zero Rate and Concurrency mean the
// deployment's defaults.
type New struct {
	TenantID    string
	URL         string
	Description string
	Filters     []string
	// Expression is a CEL expression over the event (internal/eventfilter);
	// empty: every event of the filters' types.
	Expression string
	// Transformation is a CEL expression yielding the body sent
	// (internal/eventfilter/eventtransform); empty: the body as received. It is tried
	// on TransformationSample (a JSON body), or else on the tenant's last
	// event of a type the filters take.
	Transformation       string
	TransformationSample []byte
	// Unordered sends the endpoint's events in parallel, not in order per
	// resource.
	Unordered   bool
	Rate        int
	Concurrency int
	Headers     map[string]string
	// Kind is the target's kind (default http); Settings and Credentials
	// are a rabbitmq or kafka target's.
	Kind        Kind
	Settings    TargetSettings
	Credentials *TargetCredentials
}

// Filter selects endpoints.
type Filter struct {
	TenantID string // empty: every tenant
	Enabled  *bool
}

// Page is one page of a list in id order (keyset): the items after After
// (empty: from the start), at most Limit (default 50, at most 500).
type Page struct {
	After string
	Limit int
}

func (p Page) size() int {
	switch {
	case p.Limit <= 0:
		return 50
	case p.Limit > 500:
		return 500
	}
	return p.Limit
}

// CreateEndpoint creates an endpoint with a new signing secret ("whsec_"
// and the base64 of 32 random bytes), returned here once: only its sealed
// form is kept. The tenant's count of endpoints is checked under a lock of
// the tenant's row, so creates at once never pass MaxPerTenant.
func (s Store) CreateEndpoint(ctx context.Context, n New) (Endpoint, string, error) {
	if err := checkID("tenant", n.TenantID); err != nil {
		return Endpoint{}, "", err
	}
	filters, headers, err := s.checkNew(n)
	if err != nil {
		return Endpoint{}, "", err
	}
	trial, err := s.tryTransformation(ctx, n.TenantID, filters, n.Transformation, n.TransformationSample)
	if err != nil {
		return Endpoint{}, "", err
	}
	id := uuid.NewString()
	headersKey, headersSealed, err := s.sealHeaders(id, headers)
	if err != nil {
		return Endpoint{}, "", err
	}
	settings, err := settingsColumn(n.Settings)
	if err != nil {
		return Endpoint{}, "", err
	}
	credKey, credSealed, err := s.sealCredentials(id, n.Credentials)
	if err != nil {
		return Endpoint{}, "", err
	}
	secret, err := newSecret()
	if err != nil {
		return Endpoint{}, "", err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := s.claimRoom(ctx, tx, n.TenantID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO endpoints (id, tenant_id, url, description, filters, ordered, rate_per_second, concurrency,
  headers_key_id, headers_sealed, filter_expression, target_kind, target_settings, target_key_id, target_sealed, transformation)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			id, n.TenantID, n.URL, n.Description, filters, !n.Unordered, positive(n.Rate), positive(n.Concurrency),
			headersKey, headersSealed, nonEmpty(n.Expression), n.Kind.column(), settings, credKey, credSealed,
			nonEmpty(n.Transformation)); err != nil {
			return fmt.Errorf("create endpoint: %w", err)
		}
		if _, err := tx.Exec(ctx, ruleVersionSQL, id); err != nil {
			return fmt.Errorf("create endpoint: keep its rules' version: %w", err)
		}
		if err := s.addSecret(ctx, tx, id, secret, nil); err != nil {
			return err
		}
		return s.record(ctx, tx, "endpoint.create", id, n.TenantID)
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	e, err := s.GetEndpoint(ctx, id)
	e.Trial = trial
	return e, secret, err
}

// checkNew judges a new endpoint and returns its filters and headers as
// stored.
func (s Store) checkNew(n New) ([]string, map[string]string, error) {
	if err := s.checkKind(n.Kind, n.URL, n.Settings, n.Credentials, n.Headers); err != nil {
		return nil, nil, err
	}
	if err := checkDescription(n.Description); err != nil {
		return nil, nil, err
	}
	filters, err := checkFilters(n.Filters)
	if err != nil {
		return nil, nil, err
	}
	if err := checkExpression(n.Expression); err != nil {
		return nil, nil, err
	}
	if err := checkTransformation(n.Transformation, n.TransformationSample); err != nil {
		return nil, nil, err
	}
	if err := s.Limits.check(&n.Rate, &n.Concurrency); err != nil {
		return nil, nil, err
	}
	headers, err := checkHeaders(n.Headers)
	return filters, headers, err
}

// claimRoom locks the tenant's row (creates of one tenant take turns) and
// refuses a create past MaxPerTenant.
func (s Store) claimRoom(ctx context.Context, tx pgx.Tx, tenantID string) error {
	// The count is a statement of its own, after the lock: under read
	// committed it then sees every create committed before the lock was
	// granted (a subquery of the locking statement would read the
	// snapshot taken before the wait).
	var one, n int
	err := tx.QueryRow(ctx, `SELECT 1 FROM tenants WHERE id = $1 FOR NO KEY UPDATE`, tenantID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("tenant", tenantID)
	}
	if err != nil {
		return fmt.Errorf("lock tenant: %w", err)
	}
	if err := tx.QueryRow(ctx, `SELECT count(*)::int FROM endpoints WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return fmt.Errorf("count endpoints: %w", err)
	}
	if max := s.Limits.WithDefaults().MaxPerTenant; n >= max {
		return refusal.New(refusal.Conflict, "tenant %s has %d endpoints, as many as this deployment allows (%d, --endpoints-per-tenant): delete one first", tenantID, n, max)
	}
	return nil
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

const endpointColumns = `SELECT e.id::text, e.tenant_id::text, e.url, e.description, e.filters, coalesce(e.filter_expression, ''), e.ordered,
       e.rate_per_second, e.concurrency, e.headers_key_id, e.headers_sealed, coalesce(e.disabled_reason, ''), e.disabled_at, e.paused_at, e.failing_since,
       (SELECT count(*) FROM endpoint_secrets k WHERE k.endpoint_id = e.id AND (k.expires_at IS NULL OR k.expires_at > now()))::int,
       e.created_at, e.updated_at, coalesce(e.target_kind, 'http'), e.target_settings, e.target_key_id IS NOT NULL,
       coalesce(e.transformation, ''), e.rules_version
FROM endpoints e`

// scan reads one row of endpointColumns, the headers' names opened.
func (s Store) scan(row pgx.CollectableRow) (Endpoint, error) {
	var (
		e          Endpoint
		headersKey *string
		sealed     []byte
	)
	if err := row.Scan(&e.ID, &e.TenantID, &e.URL, &e.Description, &e.Filters, &e.Expression, &e.Ordered, &e.RatePerSecond, &e.Concurrency,
		&headersKey, &sealed, &e.DisabledReason, &e.DisabledAt, &e.PausedAt, &e.FailingSince, &e.ActiveSecrets, &e.CreatedAt, &e.UpdatedAt,
		&e.Kind, &e.Settings, &e.HasCredentials, &e.Transformation, &e.RulesVersion); err != nil {
		return e, err
	}
	e.Enabled, e.Paused = e.DisabledAt == nil, e.PausedAt != nil
	e.Headers = []string{}
	if headersKey == nil {
		return e, nil
	}
	headers, err := s.openHeaders(e.ID, *headersKey, sealed)
	if err != nil {
		return e, err
	}
	for name := range headers {
		e.Headers = append(e.Headers, name)
	}
	slices.Sort(e.Headers)
	return e, nil
}

// GetEndpoint returns one endpoint.
func (s Store) GetEndpoint(ctx context.Context, id string) (Endpoint, error) {
	if err := checkID("endpoint", id); err != nil {
		return Endpoint{}, err
	}
	rows, err := s.Pool.Query(ctx, endpointColumns+` WHERE e.id = $1 AND e.tenant_id IS NOT NULL`, id)
	if err != nil {
		return Endpoint{}, fmt.Errorf("read endpoint: %w", err)
	}
	e, err := pgx.CollectExactlyOneRow(rows, s.scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return e, notFound("endpoint", id)
	}
	if err != nil {
		return e, fmt.Errorf("read endpoint: %w", err)
	}
	return e, nil
}

// TenantOf returns the tenant an endpoint belongs to (the admin API's
// owner look-up).
func (s Store) TenantOf(ctx context.Context, id string) (string, error) {
	if err := checkID("endpoint", id); err != nil {
		return "", err
	}
	var tenant string
	err := s.Pool.QueryRow(ctx, `SELECT tenant_id::text FROM endpoints WHERE id = $1 AND tenant_id IS NOT NULL`, id).Scan(&tenant)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", notFound("endpoint", id)
	}
	if err != nil {
		return "", fmt.Errorf("read endpoint: %w", err)
	}
	return tenant, nil
}

// ListEndpoints lists endpoints in id order; the second value is the next
// page's cursor ("" on the last page). A tenant filter naming no tenant
// is refused as not found, not an empty list.
func (s Store) ListEndpoints(ctx context.Context, f Filter, p Page) ([]Endpoint, string, error) {
	var after, tenant *string
	if p.After != "" {
		if checkID("cursor", p.After) != nil {
			return nil, "", invalid("cursor", "not a cursor this API returned")
		}
		after = &p.After
	}
	if f.TenantID != "" {
		if err := s.tenantExists(ctx, f.TenantID); err != nil {
			return nil, "", err
		}
		tenant = &f.TenantID
	}
	rows, err := s.Pool.Query(ctx, endpointColumns+`
WHERE e.tenant_id IS NOT NULL AND ($1::uuid IS NULL OR e.id > $1) AND ($2::uuid IS NULL OR e.tenant_id = $2)
  AND ($3::boolean IS NULL OR (e.disabled_at IS NULL) = $3)
ORDER BY e.id LIMIT $4`, after, tenant, f.Enabled, p.size()+1)
	if err != nil {
		return nil, "", fmt.Errorf("list endpoints: %w", err)
	}
	list, err := pgx.CollectRows(rows, s.scan)
	if err != nil {
		return nil, "", fmt.Errorf("list endpoints: %w", err)
	}
	if len(list) <= p.size() {
		return list, "", nil
	}
	list = list[:p.size()]
	return list, list[len(list)-1].ID, nil
}

func (s Store) tenantExists(ctx context.Context, tenantID string) error {
	if err := checkID("tenant", tenantID); err != nil {
		return err
	}
	var one int
	err := s.Pool.QueryRow(ctx, `SELECT 1 FROM tenants WHERE id = $1`, tenantID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("tenant", tenantID)
	}
	if err != nil {
		return fmt.Errorf("read tenant: %w", err)
	}
	return nil
}

// Patch is a change of an endpoint: nil fields stay as they are.
type Patch struct {
	URL         *string
	Description *string
	// Filters replace the endpoint's (at least one); nil: unchanged.
	Filters []string
	// Expression replaces the filter expression; a pointer to "" removes
	// it; nil: unchanged.
	Expression *string
	// Transformation replaces the transformation, tried on
	// TransformationSample or the tenant's last event of a type the
	// endpoint takes; a pointer to "" removes it; nil: unchanged.
	Transformation       *string
	TransformationSample []byte
	Ordered              *bool
	// Rate and Concurrency: 0 returns to the deployment's default.
	Rate        *int
	Concurrency *int
	// Headers replace every static header; a non-nil pointer to an empty
	// map clears them.
	Headers *map[string]string
	// Settings replace a rabbitmq or kafka target's settings, Credentials
	// its credentials; nil: unchanged. The kind never changes.
	Settings    *TargetSettings
	Credentials *TargetCredentials
}

// UpdateEndpoint applies a patch in one transaction; the fan-out and the
// deliverer see it within their refresh (5 s).
func (s Store) UpdateEndpoint(ctx context.Context, id string, p Patch) (Endpoint, error) {
	if err := checkID("endpoint", id); err != nil {
		return Endpoint{}, err
	}
	c, err := s.checkPatch(id, p)
	if err != nil {
		return Endpoint{}, err
	}
	if err := s.checkTargetPatch(ctx, id, p, &c); err != nil {
		return Endpoint{}, err
	}
	trial, err := s.tryPatchedTransformation(ctx, id, p, c.filters)
	if err != nil {
		return Endpoint{}, err
	}
	// A change of the expression or the transformation is the rules' next
	// version, kept in endpoint_rule_versions (the version in force is
	// written there by every update: an endpoint of the release before
	// versions gets its version 1 kept at its first update).
	err = s.change(ctx, id, "endpoint.update", `WITH up AS (
UPDATE endpoints SET url = coalesce($2, url), description = coalesce($3, description),
  filters = coalesce($4, filters), ordered = coalesce($5, ordered),
  filter_expression = CASE WHEN $13 THEN $14 ELSE filter_expression END,
  rate_per_second = CASE WHEN $6 THEN $7 ELSE rate_per_second END,
  concurrency = CASE WHEN $8 THEN $9 ELSE concurrency END,
  headers_key_id = CASE WHEN $10 THEN $11 ELSE headers_key_id END,
  headers_sealed = CASE WHEN $10 THEN $12 ELSE headers_sealed END,
  target_settings = CASE WHEN $15 THEN $16 ELSE target_settings END,
  target_key_id = CASE WHEN $17 THEN $18 ELSE target_key_id END,
  target_sealed = CASE WHEN $17 THEN $19 ELSE target_sealed END,
  transformation = CASE WHEN $20 THEN $21 ELSE transformation END,
  rules_version = rules_version + CASE WHEN ($13 AND $14 IS DISTINCT FROM filter_expression)
                                         OR ($20 AND $21 IS DISTINCT FROM transformation) THEN 1 ELSE 0 END,
  updated_at = now()
WHERE id = $1 AND tenant_id IS NOT NULL RETURNING id, tenant_id, rules_version, filter_expression, transformation
), kept AS (
  INSERT INTO endpoint_rule_versions (endpoint_id, version, filter_expression, transformation)
  SELECT id, rules_version, filter_expression, transformation FROM up
  ON CONFLICT (endpoint_id, version) DO NOTHING
)
SELECT tenant_id::text FROM up`,
		p.URL, p.Description, c.filters, p.Ordered, p.Rate != nil, positive(deref(p.Rate)), p.Concurrency != nil, positive(deref(p.Concurrency)),
		p.Headers != nil, c.headersKey, c.headersSealed, p.Expression != nil, nonEmpty(deref(p.Expression)),
		p.Settings != nil, c.settings, p.Credentials != nil, c.credKey, c.credSealed,
		p.Transformation != nil, nonEmpty(deref(p.Transformation)))
	if err != nil {
		return Endpoint{}, err
	}
	e, err := s.GetEndpoint(ctx, id)
	e.Trial = trial
	return e, err
}

// patched is a patch's columns as stored.
type patched struct {
	filters       []string
	headersKey    *string
	headersSealed []byte
	settings      []byte
	credKey       *string
	credSealed    []byte
}

func (s Store) checkPatch(id string, p Patch) (patched, error) {
	var c patched
	if p.Description != nil {
		if err := checkDescription(*p.Description); err != nil {
			return c, err
		}
	}
	if p.Filters != nil {
		var err error
		if c.filters, err = checkFilters(p.Filters); err != nil {
			return c, err
		}
	}
	if p.Expression != nil {
		if err := checkExpression(*p.Expression); err != nil {
			return c, err
		}
	}
	if p.Transformation != nil {
		if err := checkTransformation(*p.Transformation, p.TransformationSample); err != nil {
			return c, err
		}
	} else if p.TransformationSample != nil {
		return c, invalid("transformation_sample", "is tried on a transformation: set one with it")
	}
	if err := s.Limits.check(p.Rate, p.Concurrency); err != nil {
		return c, err
	}
	if p.Headers != nil {
		headers, err := checkHeaders(*p.Headers)
		if err != nil {
			return c, err
		}
		if c.headersKey, c.headersSealed, err = s.sealHeaders(id, headers); err != nil {
			return c, err
		}
	}
	return c, nil
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// nonEmpty is s, or NULL when it is empty.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// DisableEndpoint stops deliveries to an endpoint (reason operator): its
// deliveries wait, pending, until it is enabled again; the fan-out keeps
// no new ones for it once it sees the change (5 s). Disabling an enabled
// endpoint is told to its tenant's other endpoints when Topics is set
// (sluice.endpoint.disabled, trigger manual).
func (s Store) DisableEndpoint(ctx context.Context, id string) (Endpoint, error) {
	if err := checkID("endpoint", id); err != nil {
		return Endpoint{}, err
	}
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var (
			tenant string
			at     time.Time
			was    bool
			since  *time.Time
		)
		err := tx.QueryRow(ctx, disableOperatorSQL, id).Scan(&tenant, &at, &was, &since)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("endpoint", id)
		}
		if err != nil {
			return fmt.Errorf("endpoint.disable: %w", err)
		}
		if err := s.record(ctx, tx, "endpoint.disable", id, tenant); err != nil {
			return err
		}
		if !was || s.Topics == nil {
			return nil // disabled already, or not to be told
		}
		_, err = Announce(ctx, tx, *s.Topics, Transition{Type: EndpointDisabled, TenantID: tenant, EndpointID: id, At: at,
			Reason: ReasonOperator, FailingSince: since})
		return err
	})
	if err != nil {
		return Endpoint{}, err
	}
	return s.GetEndpoint(ctx, id)
}

// EnableEndpoint undoes a disable, whatever its reason, and forgets the
// failing streak.
func (s Store) EnableEndpoint(ctx context.Context, id string) (Endpoint, error) {
	return s.update(ctx, id, "endpoint.enable", `UPDATE endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL, updated_at = now()
WHERE id = $1 AND tenant_id IS NOT NULL RETURNING tenant_id::text`)
}

// PauseEndpoint stops sending to an endpoint while its deliveries keep
// being written: the fan-out still takes its events, its owner stops
// within the deliverers' refresh (5 s), and what is pending waits, in
// order, from the endpoint's mark. Pausing a paused endpoint changes
// nothing (it keeps the first pause's time).
func (s Store) PauseEndpoint(ctx context.Context, id string) (Endpoint, error) {
	return s.update(ctx, id, "endpoint.pause", `UPDATE endpoints SET paused_at = coalesce(paused_at, now()), updated_at = now()
WHERE id = $1 AND tenant_id IS NOT NULL RETURNING tenant_id::text`)
}

// ResumeEndpoint undoes a pause: an owner takes the endpoint again within
// the deliverers' refresh and sends what waited, in order, from its mark.
func (s Store) ResumeEndpoint(ctx context.Context, id string) (Endpoint, error) {
	return s.update(ctx, id, "endpoint.resume", `UPDATE endpoints SET paused_at = NULL, updated_at = now()
WHERE id = $1 AND tenant_id IS NOT NULL RETURNING tenant_id::text`)
}

func (s Store) update(ctx context.Context, id, action, sql string) (Endpoint, error) {
	if err := checkID("endpoint", id); err != nil {
		return Endpoint{}, err
	}
	if err := s.change(ctx, id, action, sql); err != nil {
		return Endpoint{}, err
	}
	return s.GetEndpoint(ctx, id)
}

// DeleteEndpoint deletes an endpoint with its secrets, and with it every
// delivery to it and their attempts (ON DELETE CASCADE): nothing pending
// is sent, and its trail is gone. Disable it instead to keep them.
func (s Store) DeleteEndpoint(ctx context.Context, id string) error {
	if err := checkID("endpoint", id); err != nil {
		return err
	}
	return s.change(ctx, id, "endpoint.delete", `DELETE FROM endpoints WHERE id = $1 AND tenant_id IS NOT NULL RETURNING tenant_id::text`)
}

// change runs one statement changing endpoint id (returning its tenant)
// and audits it, in one transaction.
func (s Store) change(ctx context.Context, id, action, sql string, args ...any) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var tenant string
		err := tx.QueryRow(ctx, sql, append([]any{id}, args...)...).Scan(&tenant)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("endpoint", id)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", action, err)
		}
		return s.record(ctx, tx, action, id, tenant)
	})
}

func (s Store) record(ctx context.Context, tx pgx.Tx, action, id, tenantID string) error {
	return s.Actor.Record(ctx, tx, audit.Target{Action: action, Resource: "endpoint", ID: id, TenantID: tenantID})
}

// sealHeaders seals headers as a JSON object for endpoint id; none: NULL.
func (s Store) sealHeaders(id string, headers map[string]string) (*string, []byte, error) {
	if len(headers) == 0 {
		return nil, nil, nil
	}
	if s.Ring == nil {
		return nil, nil, errNoRing
	}
	plain, err := json.Marshal(headers)
	if err != nil {
		return nil, nil, fmt.Errorf("seal headers: %w", err)
	}
	keyID, sealed, err := s.Ring.Seal(plain, []byte(id))
	if err != nil {
		return nil, nil, fmt.Errorf("seal headers: %w", err)
	}
	return &keyID, sealed, nil
}

func (s Store) openHeaders(id, keyID string, sealed []byte) (map[string]string, error) {
	if s.Ring == nil {
		return nil, errNoRing
	}
	plain, err := s.Ring.Open(keyID, sealed, []byte(id))
	if err != nil {
		return nil, fmt.Errorf("endpoint %s: open headers: %w", id, err)
	}
	var headers map[string]string
	if err := json.Unmarshal(plain, &headers); err != nil {
		return nil, fmt.Errorf("endpoint %s: headers: %w", id, err)
	}
	return headers, nil
}

var errNoRing = errors.New("this process has no key ring to seal or open endpoint secrets and headers with (set SLUICE_SECRET_KEY)")
