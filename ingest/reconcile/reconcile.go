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
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/ingest"
	"github.com/sluicehq/sluice/ingest/provider"
	"github.com/sluicehq/sluice/ingest/providers"
	"github.com/sluicehq/sluice/internal/tenancy"
)

var (
	//go:embed sql/run_start.sql
	runStartSQL string
	//go:embed sql/run_finish.sql
	runFinishSQL string
	//go:embed sql/correction.sql
	correctionSQL string
	//go:embed sql/watermark.sql
	watermarkSQL string
	//go:embed sql/sources.sql
	sourcesSQL string
	//go:embed sql/candidates.sql
	candidatesSQL string
	//go:embed sql/known.sql
	knownSQL string
)

// Config tunes reconciliation.
type Config struct {
	// Lookback is how far back a source's first run reaches, when no
	// --since says. Default 72h: inside GitHub's 3 days of redeliverable
	// deliveries and Stripe's 30 days of listed events.
	Lookback time.Duration
	// Overlap is how far before the last run's end the next one begins, so
	// an event the provider indexed late is still listed. Default 10m; what
	// is listed twice is a duplicate.
	Overlap time.Duration
	// Every is how often Loop reconciles every source. Default 15m: well
	// inside GitHub's 3 days of redeliverable deliveries and the 24 h an
	// identity-verification provider retries.
	Every time.Duration
	// StaleAfter is how long a non-final object (a verification left
	// pending) may go without an event before its state is fetched.
	// Default 24h: the identity-verification provider's retry window.
	StaleAfter time.Duration
	// MaxFetches bounds the objects one run fetches one by one. Default 500.
	MaxFetches int
	// HTTPClient calls the providers' APIs. Its Timeout (default 30 s)
	// bounds each attempt; its transport is wrapped so that 429 (after
	// Retry-After), 5xx and network errors of reads are retried with
	// backoff and jitter.
	HTTPClient *http.Client
	// Budget is how many requests a source's API may be sent per clock
	// hour, by all instances together (counted in Postgres), retries
	// included. Beyond it a run stops with ErrBudget and the next resumes
	// from the same watermark. Default 1000: a tenth of GitHub's 5,000 an
	// hour for an App, far under Stripe's 100 a second.
	Budget int
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	c.Lookback = cmp.Or(c.Lookback, 72*time.Hour)
	c.Overlap = cmp.Or(c.Overlap, 10*time.Minute)
	c.Every = cmp.Or(c.Every, 15*time.Minute)
	c.StaleAfter = cmp.Or(c.StaleAfter, 24*time.Hour)
	c.MaxFetches = cmp.Or(c.MaxFetches, 500)
	c.Budget = cmp.Or(c.Budget, 1000)
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return c
}

// client is the HTTP client of one source's API: every attempt, retries
// included, is drawn from the source's shared budget, and retried as the
// transport decides. The timeout moves into the transport, per attempt: on
// the client it would bound an attempt and its retries together.
func (r *Runner) client(sourceID string) *http.Client {
	client := *r.cfg.HTTPClient
	budget := &budgeted{next: client.Transport, pool: r.pool, sourceID: sourceID, limit: r.cfg.Budget}
	client.Transport = newRetrying(budget, cmp.Or(client.Timeout, 30*time.Second))
	client.Timeout = 0
	return &client
}

// Entry is where recovered events go in: ingest's Service.
type Entry interface {
	Reconcile(ctx context.Context, sourceID string, f provider.Found) (ingest.Reconciled, error)
	// Peek reads what Reconcile would enter, storing nothing (dry runs).
	Peek(ctx context.Context, sourceID string, f provider.Found) (ingest.Reconciled, error)
}

// Runner reconciles sources.
type Runner struct {
	cfg       Config
	pool      *pgxpool.Pool
	store     tenancy.Store
	providers *provider.Registry
	entry     Entry
	metrics   *Metrics
	log       *slog.Logger
}

// New builds a runner. store opens sources' API credentials (it needs the
// key ring); entry is the ingest service recovered events go through.
// A nil registry is the shipped kinds (providers.Builtin).
func New(cfg Config, log *slog.Logger, store tenancy.Store, registry *provider.Registry, entry Entry, m *Metrics) *Runner {
	if registry == nil {
		registry = providers.Builtin()
	}
	m.start(registry.Kinds())
	return &Runner{cfg: cfg.WithDefaults(), pool: store.Pool, store: store, providers: registry, entry: entry, metrics: m, log: log}
}

// ErrBusy: another instance is reconciling the source now.
var ErrBusy = errors.New("reconcile: the source is being reconciled by another instance")

// Report is what one run of one source did.
type Report struct {
	RunID    int64
	SourceID string
	Kind     provider.Kind
	Window   provider.Window
	// Found counts what the provider listed (events, failed deliveries).
	Found int
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

// Source reconciles one source over w. A zero w.Since resumes from the
// source's last successful run (less Overlap), or Lookback before w.Until
// for its first; a zero w.Until is now.
func (r *Runner) Source(ctx context.Context, sourceID string, w provider.Window) (rep Report, err error) {
	rep = Report{SourceID: sourceID, Corrections: map[Outcome]int{}}
	defer func() {
		// Another instance's run is none of this one's; a run cut short by
		// shutdown did not fail.
		if !errors.Is(err, ErrBusy) && ctx.Err() == nil {
			r.metrics.run(rep.Kind, err)
		}
	}()
	kind, creds, err := r.store.APICredentials(ctx, sourceID)
	if err != nil {
		return rep, err
	}
	rep.Kind = kind
	p, err := r.providers.Lookup(kind)
	if err != nil {
		return rep, err
	}
	rec, ok := p.(provider.Reconciler)
	if !ok {
		return rep, fmt.Errorf("a %s source has no provider API to reconcile against", kind)
	}
	api, err := rec.OpenAPI(creds, r.client(sourceID))
	if err != nil {
		return rep, err
	}
	unlock, err := r.lock(ctx, sourceID)
	if err != nil {
		return rep, err
	}
	defer unlock()
	if rep.Window, err = r.window(ctx, sourceID, w); err != nil {
		return rep, err
	}
	if err := r.pool.QueryRow(ctx, runStartSQL, sourceID, rep.Window.Since, rep.Window.Until, rep.Window.DryRun).Scan(&rep.RunID); err != nil {
		return rep, fmt.Errorf("record reconcile run: %w", err)
	}
	runErr := r.run(ctx, api, &rep)
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	// The run's row is finished even when ctx ended: what it did stays
	// counted.
	if _, err := r.pool.Exec(context.WithoutCancel(ctx), runFinishSQL, rep.RunID, rep.Found, rep.Corrected(), msg); err != nil && runErr == nil {
		runErr = fmt.Errorf("record reconcile run: %w", err)
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile run", slog.Int64("run_id", rep.RunID), slog.String("source_id", sourceID),
		slog.String("kind", string(kind)), slog.Time("since", rep.Window.Since), slog.Time("until", rep.Window.Until),
		slog.Int("found", rep.Found), slog.Int("corrected", rep.Corrected()), slog.Any("error", runErr))
	return rep, runErr
}

// window fills a window's open ends.
func (r *Runner) window(ctx context.Context, sourceID string, w provider.Window) (provider.Window, error) {
	if w.Until.IsZero() {
		w.Until = time.Now()
	}
	// A dry run is reported, never a watermark: the next run still covers
	// its window.
	if w.Since.IsZero() {
		var last *time.Time
		if err := r.pool.QueryRow(ctx, watermarkSQL, sourceID).Scan(&last); err != nil {
			return w, fmt.Errorf("read reconcile watermark: %w", err)
		}
		w.Since = w.Until.Add(-r.cfg.Lookback)
		if last != nil {
			w.Since = last.Add(-r.cfg.Overlap)
		}
	}
	if !w.Since.Before(w.Until) {
		return w, fmt.Errorf("reconcile window: since %s is not before until %s", w.Since.Format(time.RFC3339), w.Until.Format(time.RFC3339))
	}
	return w, nil
}

// run asks the API and enters what it found: listed events first, then
// redeliveries of what failed, then the states of objects left unfinished.
func (r *Runner) run(ctx context.Context, api provider.API, rep *Report) error {
	found, err := api.Events(ctx, rep.Window)
	if err != nil && !errors.Is(err, provider.ErrNotOffered) {
		return err
	}
	rep.Found += len(found)
	for _, f := range found {
		if err := r.enter(ctx, rep, f); err != nil {
			return err
		}
	}
	if err := r.redeliver(ctx, api, rep); err != nil {
		return err
	}
	return r.fetch(ctx, api, rep)
}

// enter hands one recovered event to ingest and records the correction.
func (r *Runner) enter(ctx context.Context, rep *Report, f provider.Found) error {
	if rep.Window.DryRun {
		return r.peek(ctx, rep, f)
	}
	got, err := r.entry.Reconcile(ctx, rep.SourceID, f)
	if err != nil {
		return fmt.Errorf("enter recovered event: %w", err)
	}
	if got.Skipped {
		return nil
	}
	outcome, ok := correction(got.Outcome)
	if !ok {
		return nil
	}
	return r.record(ctx, rep, got.EventID, outcome, &got.InboxID)
}

// peek counts, without entering it, an event the inbox does not hold.
func (r *Runner) peek(ctx context.Context, rep *Report, f provider.Found) error {
	got, err := r.entry.Peek(ctx, rep.SourceID, f)
	if err != nil {
		return fmt.Errorf("read recovered event: %w", err)
	}
	if got.Skipped {
		return nil
	}
	var known bool
	if err := r.pool.QueryRow(ctx, knownSQL, rep.SourceID, got.EventID).Scan(&known); err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	if !known {
		return r.record(ctx, rep, got.EventID, OutcomeRecovered, nil)
	}
	return nil
}

// redeliver asks the provider to redeliver what failed in the window.
func (r *Runner) redeliver(ctx context.Context, api provider.API, rep *Report) error {
	// What was asked before a failure is counted all the same.
	ids, err := api.Redeliver(ctx, rep.Window)
	if errors.Is(err, provider.ErrNotOffered) {
		err = nil
	}
	rep.Found += len(ids)
	for _, id := range ids {
		if rerr := r.record(ctx, rep, id, OutcomeRedeliveryRequested, nil); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	return err
}

// fetch asks the provider for the state of each local object whose final
// webhook may never have come (sql/candidates.sql) and enters it. The
// candidates are read before any call, and no transaction stays open.
func (r *Runner) fetch(ctx context.Context, api provider.API, rep *Report) error {
	rows, err := r.pool.Query(ctx, candidatesSQL, rep.SourceID, r.cfg.StaleAfter, rep.Window.Since, r.cfg.MaxFetches)
	if err != nil {
		return fmt.Errorf("reconcile candidates: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("reconcile candidates: %w", err)
	}
	for _, id := range ids {
		f, err := api.State(ctx, id)
		switch {
		case errors.Is(err, provider.ErrNotOffered):
			return nil
		case errors.Is(err, provider.ErrNotFound):
			r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile candidate not found", slog.String("source_id", rep.SourceID), slog.String("object_id", id))
			continue
		}
		if err != nil {
			return err
		}
		rep.Found++
		if err := r.enter(ctx, rep, f); err != nil {
			return err
		}
	}
	return nil
}

// record counts one correction, persistently and in the metric.
// A dry run's would-be corrections are reported and logged, not counted.
func (r *Runner) record(ctx context.Context, rep *Report, eventID string, o Outcome, inboxID *int64) error {
	rep.Corrections[o]++
	if rep.Window.DryRun {
		r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile would correct", slog.Int64("run_id", rep.RunID), slog.String("source_id", rep.SourceID),
			slog.String("event_id", eventID), slog.String("outcome", string(o)))
		return nil
	}
	r.metrics.corrections.WithLabelValues(string(rep.Kind), string(o)).Inc()
	r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile correction", slog.Int64("run_id", rep.RunID), slog.String("source_id", rep.SourceID),
		slog.String("event_id", eventID), slog.String("outcome", string(o)))
	if _, err := r.pool.Exec(ctx, correctionSQL, rep.RunID, rep.SourceID, eventID, string(o), inboxID); err != nil {
		return fmt.Errorf("record correction: %w", err)
	}
	return nil
}

// All reconciles every enabled source with API credentials over w; a
// source another instance is reconciling is skipped. It returns the
// reports of the sources it ran and the first error.
func (r *Runner) All(ctx context.Context, w provider.Window) ([]Report, error) {
	rows, err := r.pool.Query(ctx, sourcesSQL)
	if err != nil {
		return nil, fmt.Errorf("list sources to reconcile: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("list sources to reconcile: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sources to reconcile: %w", err)
	}
	var (
		reports []Report
		first   error
	)
	for _, id := range ids {
		rep, err := r.Source(ctx, id, w)
		switch {
		case errors.Is(err, ErrBusy):
			continue
		case err != nil && first == nil:
			first = err
		}
		reports = append(reports, rep)
	}
	return reports, first
}
