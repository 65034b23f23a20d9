package endpoints

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/standardwebhooks"
)

// Subscriptions reads every enabled endpoint's filters and expression,
// paused ones included: a paused endpoint's deliveries are still written.
func (s Store) Subscriptions(ctx context.Context) ([]Subscription, error) {
	return s.subscriptions(ctx, "")
}

// TenantSubscriptions reads tenant's enabled endpoints as Subscriptions
// does (an event's trail judges them).
func (s Store) TenantSubscriptions(ctx context.Context, tenantID string) ([]Subscription, error) {
	if err := checkID("tenant", tenantID); err != nil {
		return nil, err
	}
	return s.subscriptions(ctx, tenantID)
}

func (s Store) subscriptions(ctx context.Context, tenant string) ([]Subscription, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id::text, tenant_id::text, filters, coalesce(filter_expression, ''), rules_version FROM endpoints
WHERE disabled_at IS NULL AND tenant_id IS NOT NULL AND ($1 = '' OR tenant_id::text = $1) ORDER BY id`, tenant)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	subs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Subscription, error) {
		var sub Subscription
		err := r.Scan(&sub.EndpointID, &sub.TenantID, &sub.Filters, &sub.Expression, &sub.RulesVersion)
		return sub, err
	})
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	return subs, nil
}

// AnyEnabled reports whether some tenant's endpoint is enabled: while
// none is, the fan-out has nothing to write and its group need not read.
func (s Store) AnyEnabled(ctx context.Context) (bool, error) {
	var enabled bool
	err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM endpoints WHERE disabled_at IS NULL AND tenant_id IS NOT NULL)`).Scan(&enabled)
	if err != nil {
		return false, fmt.Errorf("read whether an endpoint is enabled: %w", err)
	}
	return enabled, nil
}

// Target is an enabled endpoint as the deliverer sees it: where, how, and
// the keys that sign for it, opened.
type Target struct {
	ID       string
	TenantID string
	URL      string
	Ordered  bool
	// Rate (per second) and Concurrency are the endpoint's own; zero: the
	// deployment's default.
	Rate        int
	Concurrency int
	// Keys sign every request, newest first: several during a rotation's
	// overlap, each giving one signature of the header.
	Keys [][]byte
	// Headers are the endpoint's static headers, sent on every request and
	// never logged.
	Headers map[string]string
	// FailingSince is the first failure of the current streak.
	FailingSince *time.Time
	// Kind is what URL names; Settings and Credentials (opened; nil: none)
	// are a rabbitmq or kafka target's.
	Kind        Kind
	Settings    TargetSettings
	Credentials *TargetCredentials
	// Transformation is the endpoint's (empty: the body as received), of
	// its rules' version RulesVersion: the deliverer sends with the rules
	// it read last, and records their version on each outcome.
	Transformation string
	RulesVersion   int64
}

// SameConnection says whether t and u reach their target the same way:
// the deliverer keeps a connection of a target that is not HTTP while it
// does.
func (t Target) SameConnection(u Target) bool {
	if t.Kind != u.Kind {
		return false
	}
	if t.Kind == KindHTTP {
		return true // a request each: nothing is held
	}
	return t.URL == u.URL && t.Settings == u.Settings && (t.Credentials == nil) == (u.Credentials == nil) &&
		(t.Credentials == nil || *t.Credentials == *u.Credentials)
}

// Targets reads every enabled endpoint that is not paused, with its secrets
// and headers opened: a paused endpoint has no target, so no owner sends
// to it and its mark stays where it is until it is resumed.
// An endpoint whose secrets or headers do not open is left out, named in
// the error returned beside the others, which are never nil then (an
// empty list when none opened): nil targets mean the read failed.
func (s Store) Targets(ctx context.Context) ([]Target, error) {
	return s.targets(ctx, "")
}

// Target reads enabled endpoint id like Targets; false when there is none.
func (s Store) Target(ctx context.Context, id string) (Target, bool, error) {
	targets, err := s.targets(ctx, id)
	if len(targets) == 0 {
		return Target{}, false, err
	}
	return targets[0], true, err
}

// targets reads the enabled endpoints, only endpoint only when not "".
func (s Store) targets(ctx context.Context, only string) ([]Target, error) {
	rows, err := s.Pool.Query(ctx, `
SELECT e.id::text, e.tenant_id::text, e.url, e.ordered, coalesce(e.rate_per_second, 0), coalesce(e.concurrency, 0),
       e.headers_key_id, e.headers_sealed, e.failing_since,
       coalesce(e.target_kind, 'http'), coalesce(e.target_settings, '{}'), e.target_key_id, e.target_sealed,
       coalesce(e.transformation, ''), e.rules_version,
       coalesce(array_agg(k.key_id ORDER BY k.id DESC) FILTER (WHERE k.id IS NOT NULL), '{}'),
       coalesce(array_agg(k.ciphertext ORDER BY k.id DESC) FILTER (WHERE k.id IS NOT NULL), '{}')
FROM endpoints e
LEFT JOIN endpoint_secrets k ON k.endpoint_id = e.id AND (k.expires_at IS NULL OR k.expires_at > now())
WHERE e.disabled_at IS NULL AND e.paused_at IS NULL AND e.tenant_id IS NOT NULL AND ($1 = '' OR e.id::text = $1)
GROUP BY e.id
ORDER BY e.id`, only)
	if err != nil {
		return nil, fmt.Errorf("read targets: %w", err)
	}
	defer rows.Close()
	var (
		targets  = []Target{}
		unopened []error
	)
	for rows.Next() {
		var (
			t          Target
			headersKey *string
			headers    []byte
			keyIDs     []string
			sealed     [][]byte
			credKey    *string
			cred       []byte
		)
		if err := rows.Scan(&t.ID, &t.TenantID, &t.URL, &t.Ordered, &t.Rate, &t.Concurrency, &headersKey, &headers,
			&t.FailingSince, &t.Kind, &t.Settings, &credKey, &cred, &t.Transformation, &t.RulesVersion, &keyIDs, &sealed); err != nil {
			return nil, fmt.Errorf("read targets: %w", err)
		}
		err := s.open(&t, headersKey, headers, keyIDs, sealed)
		if err == nil {
			t.Credentials, err = s.openCredentials(t.ID, credKey, cred)
		}
		if err != nil {
			// One endpoint whose secret does not open (a key ring without
			// its key) must not stop every other's deliveries.
			unopened = append(unopened, err)
			continue
		}
		targets = append(targets, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read targets: %w", err)
	}
	return targets, errors.Join(unopened...)
}

// ErrNoSecret: an endpoint has no signing secret in force (none yet, or
// every one expired). It is left out of Targets like one whose secret does
// not open, so its deliveries wait: a request without a signature is one
// the receiver must refuse, and one a forger could have sent.
var ErrNoSecret = errors.New("no signing secret in force: its deliveries wait")

// open fills t's keys and headers from their sealed forms.
func (s Store) open(t *Target, headersKey *string, headers []byte, keyIDs []string, sealed [][]byte) error {
	if len(keyIDs) == 0 {
		return fmt.Errorf("endpoint %s: %w", t.ID, ErrNoSecret)
	}
	for i := range keyIDs {
		secret, err := s.Ring.Open(keyIDs[i], sealed[i], []byte(t.ID))
		if err != nil {
			return fmt.Errorf("endpoint %s: open secret: %w", t.ID, err)
		}
		key, err := standardwebhooks.Key(string(secret))
		if err != nil {
			return fmt.Errorf("endpoint %s: secret: %w", t.ID, err)
		}
		t.Keys = append(t.Keys, key)
	}
	if headersKey == nil {
		return nil
	}
	plain, err := s.Ring.Open(*headersKey, headers, []byte(t.ID))
	if err != nil {
		return fmt.Errorf("endpoint %s: open headers: %w", t.ID, err)
	}
	if err := json.Unmarshal(plain, &t.Headers); err != nil {
		return fmt.Errorf("endpoint %s: headers: %w", t.ID, err)
	}
	return nil
}
