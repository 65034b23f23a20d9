// Package reconcile asks each provider's API for what its webhooks should
// have told Sluice, and enters what is missing through the same door as a
// webhook (ingest's Service.Reconcile: inbox and outbox rows in one
// group-commit transaction), never by writing an effect.
//
// The invariant it keeps: reconciling a window any number of times, before
// or after the webhooks it stands in for, produces the inbox rows (and so
// the effects) of one delivery per event. A listed event keeps its real
// event id, so a later webhook is a duplicate of the recovered row; a
// provider that can only redeliver is asked to, and its redelivery keeps
// its delivery id. No transaction is held open across a remote call: the
// API is asked first, then each event is committed like a delivery.
package reconcile

import (
	"cmp"
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

var (
	//go:embed sql/run_start.sql
	runStartSQL string
	//go:embed sql/run_refused.sql
	runRefusedSQL string
	//go:embed sql/run_finish.sql
	runFinishSQL string
	//go:embed sql/page.sql
	pageSQL string
	//go:embed sql/sources.sql
	sourcesSQL string
	//go:embed sql/candidates.sql
	candidatesSQL string
	//go:embed sql/candidates_verifications.sql
	verificationCandidatesSQL string
	//go:embed sql/candidates_feedback.sql
	feedbackCandidatesSQL string
	//go:embed sql/candidates_installations.sql
	installationCandidatesSQL string
	//go:embed sql/known.sql
	knownSQL string
)

// Config tunes reconciliation.
type Config struct {
	// Lookback is how far back a source's first run reaches, when no
	// --since says. Default 72h: inside GitHub's 3 days of redeliverable
	// deliveries and Stripe's 30 days of listed events.
	Lookback time.Duration
	// Overlap is how far before the end of the last window read the next
	// one begins, so an event the provider indexed late is still listed.
	// Default 10m; what is listed twice is a duplicate.
	Overlap time.Duration
	// Every is how often Loop begins a run of each source, counted from
	// the source's last automatic run as stored in Postgres, not from the
	// process's start: a fleet restarted more often than Every still
	// reconciles every Every. Default 15m: well inside GitHub's 3 days of
	// redeliverable deliveries and the 24 h an identity-verification
	// provider retries.
	Every time.Duration
	// Jitter is the most a due run is delayed at random, so instances
	// restarted together do not all call a provider at once. Default a
	// tenth of Every, at most 30s.
	Jitter time.Duration
	// RunTimeout bounds one run of one source, waits for a throttling
	// provider included; a run that reaches it stops (outcome incomplete)
	// and the next resumes from its last page. Default 30m.
	RunTimeout time.Duration
	// StaleAfter is how long a non-final object (a verification left
	// pending) may go without an event before its state is fetched.
	// Default 24h: the identity-verification provider's retry window.
	StaleAfter time.Duration
	// MaxFetches bounds the objects one run fetches one by one; the next
	// run goes on after the last one fetched. Default 500.
	MaxFetches int
	// HTTPClient calls the providers' APIs. Its Timeout (default 30 s)
	// bounds each attempt; its transport is wrapped so that 429s are
	// waited out (Retry-After as the least wait) for as long as the run
	// may last, and 5xx and network errors of reads are retried a few
	// times, with backoff and jitter.
	HTTPClient *http.Client
	// MaxBackoff caps one wait between attempts, but never below a 429's
	// Retry-After. Default 30s.
	MaxBackoff time.Duration
	// EffectGroups are the effect groups the deployment runs, by name.
	// The state of an object is fetched because a group's projection
	// holds it in doubt (a verification left pending, feedback without its
	// alert, an installation whose version tied) only for the groups
	// among them: a deployment that does not run a group never reads its
	// tables (ReadsGroup). None: only the objects waiting for a link are.
	EffectGroups []string
	// Budget is how many requests a source's API may be sent per clock
	// hour, by all instances together (counted in Postgres), retries
	// included but not the attempts the provider answered 429 (its own
	// limit, waited out). Beyond it a run stops with ErrBudget and the
	// next resumes from its last page, so a window larger than one hour's
	// budget is read over several hours. Default 1000: a tenth of
	// GitHub's 5,000 an hour for an App, far under Stripe's 100 a second.
	Budget int
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.Lookback = cmp.Or(c.Lookback, 72*time.Hour)
	c.Overlap = cmp.Or(c.Overlap, 10*time.Minute)
	c.Every = cmp.Or(c.Every, 15*time.Minute)
	c.Jitter = cmp.Or(c.Jitter, min(c.Every/10, 30*time.Second))
	c.RunTimeout = cmp.Or(c.RunTimeout, 30*time.Minute)
	c.StaleAfter = cmp.Or(c.StaleAfter, 24*time.Hour)
	c.MaxFetches = cmp.Or(c.MaxFetches, 500)
	c.Budget = cmp.Or(c.Budget, 1000)
	c.MaxBackoff = cmp.Or(c.MaxBackoff, 30*time.Second)
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return c
}

// Validate says what in a filled Config cannot work.
func (c Config) Validate() error {
	switch {
	case c.Every < time.Second:
		return fmt.Errorf("reconcile interval %s: at least 1s", c.Every)
	case c.Jitter < 0 || c.Jitter > c.Every:
		return fmt.Errorf("reconcile jitter %s: between 0 and the interval", c.Jitter)
	case c.Budget < 1:
		return fmt.Errorf("reconcile budget %d: at least 1 request an hour", c.Budget)
	}
	return nil
}

// candidatesQuery is a query of the objects of a source an effect
// group's projection holds in doubt.
type candidatesQuery struct{ group, sql string }

// groupCandidates are, per effect group, the objects of a source its
// projection holds in doubt, whose state the provider should decide
// (sql/candidates.sql joins those of the groups that run).
var groupCandidates = []candidatesQuery{
	{"verifications", verificationCandidatesSQL},
	{"feedback", feedbackCandidatesSQL},
	{"installations", installationCandidatesSQL},
}

// ReadsGroup says whether reconciliation reads the tables of effect group
// name when the deployment runs it (to choose the objects whose state to
// fetch): the role running reconciliation then needs SELECT on them.
func ReadsGroup(name string) bool {
	return slices.ContainsFunc(groupCandidates, func(c candidatesQuery) bool { return c.group == name })
}

// candidatesOf is sql/candidates.sql with the candidates of the groups
// among running.
func candidatesOf(running []string) string {
	var b strings.Builder
	for _, c := range groupCandidates {
		if slices.Contains(running, c.group) {
			b.WriteString("UNION\n" + strings.TrimRight(c.sql, "\n") + "\n")
		}
	}
	return strings.Replace(candidatesSQL, "-- the running groups' candidates\n", b.String(), 1)
}

// Entry is where recovered events go in: ingest's Service.
type Entry interface {
	// Reconcile enters a page of recovered events together, through group
	// commit, and says what became of each.
	Reconcile(ctx context.Context, sourceID string, found []provider.Found) ([]ingest.Reconciled, error)
	// Peek reads what Reconcile would enter, storing nothing (dry runs).
	Peek(ctx context.Context, sourceID string, found []provider.Found) ([]ingest.Reconciled, error)
	// HandledTypes lists the provider types the source's catalogue
	// handles: the only ones worth listing.
	HandledTypes(ctx context.Context, sourceID string) ([]string, error)
}

// Runner reconciles sources.
type Runner struct {
	cfg        Config
	candidates string // sql/candidates.sql with the running groups'
	pool       *pgxpool.Pool
	store      tenancy.Store
	providers  *provider.Registry
	entry      Entry
	metrics    *Metrics
	log        *slog.Logger
}

// New builds a runner. store opens sources' API credentials (it needs the
// key ring); entry is the ingest service recovered events go through.
// registry is the process's (provider.Registry says who chooses it).
func New(cfg Config, log *slog.Logger, store tenancy.Store, registry *provider.Registry, entry Entry, m *Metrics) *Runner {
	m.start(registry.Kinds())
	return &Runner{cfg: cfg.WithDefaults(), candidates: candidatesOf(cfg.EffectGroups), pool: store.Pool, store: store, providers: registry, entry: entry, metrics: m, log: log}
}

// ErrBusy: another instance is reconciling the source now.
var ErrBusy = refusal.Sub(refusal.Conflict, "reconcile_busy", "reconcile: the source is being reconciled by another instance")

// ErrWindow: the window asked for cannot be reconciled (it ends before it
// begins). The run is refused and recorded so.
var ErrWindow = refusal.Sub(refusal.Invalid, "reconcile_window", "reconcile: invalid window")

// Report is what one run of one source did.
type Report struct {
	RunID    int64
	SourceID string
	Kind     provider.Kind
	Window   provider.Window
	// Automatic: the run read the source's automatic window (no --since
	// and no --until), resuming it where the last run stopped.
	Automatic bool
	// Resumed: the run went on with a window an earlier run began.
	Resumed bool
	// Clamped: the window asked for ended after now, and was cut at now.
	Clamped bool
	// Outcome is how the run ended.
	Outcome RunOutcome
	// Missing names a permission the provider refused for an optional
	// lookup (the run is then partial).
	Missing string
	// Found counts what the provider listed (events, failed deliveries,
	// fetched objects); Pages the pages handled; Requests the requests
	// sent, throttled ones included.
	Found, Pages, Requests int
	// Reached is how far back in the window the listing came.
	Reached time.Time
	// Corrections count, by outcome, what the run changed.
	Corrections map[Outcome]int
}

// Corrected is the number of corrections of every outcome.
func (r Report) Corrected() int {
	n := 0
	for _, c := range r.Corrections {
		n += c
	}
	return n
}
