package reconcile

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/provider"
)

var (
	//go:embed sql/position.sql
	positionSQL string
	//go:embed sql/position_begin.sql
	positionBeginSQL string
	//go:embed sql/position_done.sql
	positionDoneSQL string
	//go:embed sql/position_manual.sql
	positionManualSQL string
	//go:embed sql/position_phase.sql
	positionPhaseSQL string
)

// The phases of a window, in order; a saved position names the one it
// stopped in.
const (
	phaseEvents    = "events"
	phaseRedeliver = "redeliver"
	phaseFetch     = "fetch"
)

// Phases lists a window's phases in order: the values of a run's or a
// position's phase.
func Phases() []string { return []string{phaseEvents, phaseRedeliver, phaseFetch} }

// fetchPage is how many objects' states are entered together.
const fetchPage = 50

// run is one run of one source under way.
type run struct {
	*Report
	api      provider.API
	phase    string
	cursor   string
	requests *atomic.Int64
	// auto: the run saves the source's automatic position after each page.
	auto bool
}

// Source reconciles one source over w. A zero w (no Since, no Until) is
// the source's automatic window: the one in progress, resumed from its last
// saved page, or the next from where the last one ended (less Overlap;
// Lookback back for a source's first). A window given in part or whole is
// manual: a zero Since begins where the automatic position stands, a zero
// Until is now, an Until after now is cut at now (Report.Clamped). A manual
// window read to its end moves the automatic position only where it joins
// it (sql/position_manual.sql). A dry run saves no position.
//
// Every run of a known source is a row of reconcile_runs, refused ones
// too, but for ErrBusy: another instance's run is that one's.
func (r *Runner) Source(ctx context.Context, sourceID string, w provider.Window) (rep Report, err error) {
	rep = Report{SourceID: sourceID, Window: w, Corrections: map[Outcome]int{}, Automatic: w.Since.IsZero() && w.Until.IsZero()}
	defer func() {
		if !errors.Is(err, ErrBusy) {
			r.metrics.run(rep.Kind, rep.Outcome)
		}
	}()
	api, err := r.open(ctx, &rep)
	if err != nil {
		return rep, r.refuse(ctx, &rep, err)
	}
	unlock, err := r.lock(ctx, sourceID)
	if err != nil {
		return rep, err
	}
	defer unlock()
	ru := &run{Report: &rep, api: api.api, requests: api.requests, phase: phaseEvents, auto: rep.Automatic && !w.DryRun}
	if err := r.window(ctx, ru); err != nil {
		return rep, r.refuse(ctx, &rep, err)
	}
	if rep.Window.Types, err = r.entry.HandledTypes(ctx, sourceID); err != nil {
		return rep, r.refuse(ctx, &rep, err)
	}
	note := ""
	if rep.Clamped {
		note = "until was after now: cut at now"
	}
	if err := r.pool.QueryRow(ctx, runStartSQL, sourceID, rep.Window.Since, rep.Window.Until, w.DryRun, rep.Automatic, ru.phase, note).Scan(&rep.RunID); err != nil {
		return rep, fmt.Errorf("record reconcile run: %w", err)
	}
	// execute fills rep through ru: called first, read after.
	err = r.execute(ctx, ru)
	return rep, err
}

// execute reads a begun run's window within the run's deadline, moves the
// position past it when read to its end, and finishes the run's row.
func (r *Runner) execute(ctx context.Context, ru *run) error {
	runCtx, cancel := context.WithTimeout(ctx, r.cfg.RunTimeout)
	defer cancel()
	runErr := r.phases(runCtx, ru)
	ru.Outcome = outcomeOf(ctx, runCtx, runErr, ru.Missing)
	ru.Requests = int(ru.requests.Load())
	if runErr == nil && !ru.Window.DryRun {
		runErr = r.complete(ctx, ru)
	}
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	if ru.Outcome == OutcomeIncomplete {
		// The run did its share; the next goes on. Its row says why it
		// stopped.
		runErr = nil
	}
	// The run's row is finished even when ctx ended: what it did stays
	// counted.
	if _, err := r.pool.Exec(context.WithoutCancel(ctx), runFinishSQL, ru.RunID, ru.Found, ru.Corrected(), msg, string(ru.Outcome),
		ru.Missing, ru.Pages, ru.Requests, ru.phase, nullTime(ru.Reached)); err != nil && runErr == nil {
		runErr = fmt.Errorf("record reconcile run: %w", err)
	}
	level := slog.LevelInfo
	if ru.Outcome != OutcomeOK {
		level = slog.LevelWarn
	}
	r.log.LogAttrs(ctx, level, "reconcile run", slog.Int64("run_id", ru.RunID), slog.String("source_id", ru.SourceID),
		slog.String("kind", string(ru.Kind)), slog.String("outcome", string(ru.Outcome)), slog.Bool("automatic", ru.Automatic),
		slog.Bool("resumed", ru.Resumed), slog.Time("since", ru.Window.Since), slog.Time("until", ru.Window.Until),
		slog.Int("found", ru.Found), slog.Int("corrected", ru.Corrected()), slog.Int("pages", ru.Pages),
		slog.Int("requests", ru.Requests), slog.String("missing_permission", ru.Missing), slog.Any("error", runErr))
	return runErr
}

type openAPI struct {
	api      provider.API
	requests *atomic.Int64
}

// open reads the source's credentials and opens its provider's API.
func (r *Runner) open(ctx context.Context, rep *Report) (openAPI, error) {
	kind, creds, err := r.store.APICredentials(ctx, rep.SourceID)
	if err != nil {
		return openAPI{}, err
	}
	rep.Kind = kind
	p, err := r.providers.Lookup(kind)
	if err != nil {
		return openAPI{}, err
	}
	rec, ok := p.(provider.Reconciler)
	if !ok {
		return openAPI{}, fmt.Errorf("a %s source has no provider API to reconcile against", kind)
	}
	requests := &atomic.Int64{}
	api, err := rec.OpenAPI(creds, r.client(rep.SourceID, kind, requests))
	if err != nil {
		return openAPI{}, err
	}
	return openAPI{api: api, requests: requests}, nil
}

// refuse records a run that could not begin, and returns why.
func (r *Runner) refuse(ctx context.Context, rep *Report, cause error) error {
	rep.Outcome = OutcomeRefused
	if ctx.Err() != nil {
		rep.Outcome = OutcomeInterrupted
		return cause
	}
	if _, err := r.pool.Exec(ctx, runRefusedSQL, rep.SourceID, nullTime(rep.Window.Since), nullTime(rep.Window.Until),
		rep.Window.DryRun, rep.Automatic, cause.Error()); err != nil {
		return errors.Join(cause, fmt.Errorf("record refused reconcile run: %w", err))
	}
	r.log.LogAttrs(ctx, slog.LevelWarn, "reconcile run refused", slog.String("source_id", rep.SourceID),
		slog.String("kind", string(rep.Kind)), slog.Any("error", cause))
	return cause
}

// window decides the run's window and where in it the run begins.
func (r *Runner) window(ctx context.Context, ru *run) error {
	now := time.Now()
	var (
		covered, since, until, reached *time.Time
		phase, cursor                  string
	)
	err := r.pool.QueryRow(ctx, positionSQL, ru.SourceID).Scan(&covered, &since, &until, &phase, &cursor, &reached)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read reconcile position: %w", err)
	}
	// A position is never later than now, whatever stored it.
	if covered != nil && covered.After(now) {
		covered = &now
	}
	w := &ru.Window
	if ru.Automatic && since != nil {
		w.Since, w.Until = *since, *until
		ru.phase, ru.cursor, ru.Resumed = phase, cursor, true
		if reached != nil {
			ru.Reached = *reached
		}
		return nil
	}
	if w.Until.IsZero() {
		w.Until = now
	}
	if w.Until.After(now) {
		w.Until, ru.Clamped = now, true
	}
	if w.Since.IsZero() {
		w.Since = w.Until.Add(-r.cfg.Lookback)
		if covered != nil {
			w.Since = covered.Add(-r.cfg.Overlap)
		}
	}
	if !w.Since.Before(w.Until) {
		return fmt.Errorf("%w: since %s is not before until %s", ErrWindow, w.Since.Format(time.RFC3339), w.Until.Format(time.RFC3339))
	}
	if ru.auto {
		if _, err := r.pool.Exec(ctx, positionBeginSQL, ru.SourceID, w.Since, w.Until, ru.phase); err != nil {
			return fmt.Errorf("save reconcile position: %w", err)
		}
	}
	return nil
}

// complete moves the automatic position past a window read to its end.
func (r *Runner) complete(ctx context.Context, ru *run) error {
	if ru.Outcome != OutcomeOK && ru.Outcome != OutcomePartial {
		return nil
	}
	var err error
	if ru.auto {
		_, err = r.pool.Exec(ctx, positionDoneSQL, ru.SourceID)
	} else {
		_, err = r.pool.Exec(ctx, positionManualSQL, ru.SourceID, ru.Window.Since, ru.Window.Until, time.Now().Add(-r.cfg.Lookback))
	}
	if err != nil {
		return fmt.Errorf("save reconcile position: %w", err)
	}
	return nil
}

// phases reads the window from where the run stands to its end: listed
// events, then redeliveries of what failed, then the states of objects
// left unfinished. Each phase saves its position page by page, and its end
// with the page that ends it.
func (r *Runner) phases(ctx context.Context, ru *run) error {
	for {
		var err error
		phase := ru.phase
		switch phase {
		case phaseEvents:
			err = ru.api.Events(ctx, ru.Window, ru.cursor, func(p provider.Page) error { return r.page(ctx, ru, p) })
		case phaseRedeliver:
			err = ru.api.Redeliver(ctx, ru.Window, ru.cursor, func(p provider.Page) error { return r.page(ctx, ru, p) })
		case phaseFetch:
			return r.fetch(ctx, ru)
		default: // a phase another release saved: read the window again
			ru.phase, ru.cursor = phaseEvents, ""
			continue
		}
		if errors.Is(err, provider.ErrNotOffered) {
			err = r.advance(ctx, ru)
		}
		if err != nil {
			return err
		}
		if ru.phase == phase {
			return fmt.Errorf("reconcile: the %s listing ended without its last page", phase)
		}
	}
}

// next is the phase after one.
func next(phase string) string {
	switch phase {
	case phaseEvents:
		return phaseRedeliver
	default:
		return phaseFetch
	}
}

// advance moves a run to its next phase, at its start, and saves that.
func (r *Runner) advance(ctx context.Context, ru *run) error {
	ru.phase, ru.cursor = next(ru.phase), ""
	if !ru.auto {
		return nil
	}
	if _, err := r.pool.Exec(ctx, positionPhaseSQL, ru.SourceID, ru.phase); err != nil {
		return fmt.Errorf("save reconcile position: %w", err)
	}
	return nil
}

// page enters one page (or, in a dry run, reads it), then records its
// corrections and where the run stands.
func (r *Runner) page(ctx context.Context, ru *run, p provider.Page) error {
	ru.Found += p.Listed
	c := corrections{}
	if len(p.Found) > 0 {
		if err := r.enter(ctx, ru, p.Found, &c); err != nil {
			return err
		}
	}
	for _, id := range p.Asked {
		c.add(id, OutcomeRedeliveryRequested, 0)
	}
	if !p.Reached.IsZero() {
		ru.Reached = p.Reached
	}
	cursor := p.Cursor
	if p.Done {
		ru.phase, cursor = next(ru.phase), ""
	}
	return r.save(ctx, ru, cursor, c)
}

// save records a handled page: its corrections, the run's counts, and
// (automatic runs) the source's position, after the page's events were
// committed. A dry run's would-be corrections are reported and logged, not
// stored.
func (r *Runner) save(ctx context.Context, ru *run, cursor string, c corrections) error {
	ru.Pages++
	ru.cursor = cursor
	for i, o := range c.outcomes {
		ru.Corrections[Outcome(o)]++
		attrs := []slog.Attr{slog.Int64("run_id", ru.RunID), slog.String("source_id", ru.SourceID),
			slog.String("event_id", c.events[i]), slog.String("outcome", o)}
		if ru.Window.DryRun {
			r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile would correct", attrs...)
			continue
		}
		r.metrics.corrections.WithLabelValues(string(ru.Kind), o).Inc()
		r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile correction", attrs...)
	}
	if ru.Window.DryRun {
		c = corrections{}
	}
	_, err := r.pool.Exec(ctx, pageSQL, ru.RunID, ru.SourceID, c.events, c.outcomes, c.inboxIDs, ru.Found, ru.Corrected(),
		ru.Pages, ru.requests.Load(), ru.phase, cursor, nullTime(ru.Reached), ru.auto)
	if err != nil {
		return fmt.Errorf("save reconcile position: %w", err)
	}
	return nil
}

// corrections are a page's, as the arrays sql/page.sql inserts.
type corrections struct {
	events, outcomes []string
	inboxIDs         []int64
}

func (c *corrections) add(eventID string, o Outcome, inboxID int64) {
	c.events, c.outcomes, c.inboxIDs = append(c.events, eventID), append(c.outcomes, string(o)), append(c.inboxIDs, inboxID)
}

// enter hands a page's recovered events to ingest together and notes the
// corrections; a dry run asks which ones the inbox lacks instead.
func (r *Runner) enter(ctx context.Context, ru *run, found []provider.Found, c *corrections) error {
	if ru.Window.DryRun {
		return r.peek(ctx, ru, found, c)
	}
	got, err := r.entry.Reconcile(ctx, ru.SourceID, found)
	if err != nil {
		return fmt.Errorf("enter recovered events: %w", err)
	}
	for _, g := range got {
		if g.Skipped {
			continue
		}
		if o, ok := correction(g.Outcome); ok {
			c.add(g.EventID, o, g.InboxID)
		}
	}
	return nil
}

// peek notes, without entering them, the events the inbox does not hold.
func (r *Runner) peek(ctx context.Context, ru *run, found []provider.Found, c *corrections) error {
	got, err := r.entry.Peek(ctx, ru.SourceID, found)
	if err != nil {
		return fmt.Errorf("read recovered events: %w", err)
	}
	var ids []string
	for _, g := range got {
		if !g.Skipped {
			ids = append(ids, g.EventID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := r.pool.Query(ctx, knownSQL, ru.SourceID, ids)
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	known, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("dry run: %w", err)
	}
	have := make(map[string]bool, len(known))
	for _, id := range known {
		have[id] = true
	}
	for _, id := range ids {
		if !have[id] {
			c.add(id, OutcomeRecovered, 0)
		}
	}
	return nil
}

// fetch asks the provider for the state of each local object whose final
// webhook may never have come (sql/candidates.sql), in pages after the
// last one fetched, and enters each page's together. No transaction stays
// open across a call. A permission the provider refuses ends the phase:
// the window is then partial, and what waits on those objects stays
// waiting (and counted in status).
func (r *Runner) fetch(ctx context.Context, ru *run) error {
	for fetched := 0; fetched < r.cfg.MaxFetches; {
		rows, err := r.pool.Query(ctx, r.candidates, ru.SourceID, r.cfg.StaleAfter, ru.Window.Since, min(fetchPage, r.cfg.MaxFetches-fetched), ru.cursor)
		if err != nil {
			return fmt.Errorf("reconcile candidates: %w", err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("reconcile candidates: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		var found []provider.Found
		stop := error(nil)
		for _, id := range ids {
			f, err := ru.api.State(ctx, id)
			var perm *provider.PermissionError
			switch {
			case errors.Is(err, provider.ErrNotOffered):
				return r.fetched(ctx, ru, found, ru.cursor)
			case errors.Is(err, provider.ErrNotFound):
				r.log.LogAttrs(ctx, slog.LevelInfo, "reconcile candidate not found", slog.String("source_id", ru.SourceID), slog.String("object_id", id))
			case errors.As(err, &perm):
				ru.Missing = perm.Permission
				if ru.Missing == "" {
					ru.Missing = "unnamed"
				}
				r.metrics.permissions.WithLabelValues(string(ru.Kind), ru.Missing).Inc()
				r.log.LogAttrs(ctx, slog.LevelWarn, "reconcile lookup refused for want of a permission", slog.String("source_id", ru.SourceID),
					slog.String("kind", string(ru.Kind)), slog.String("object_id", id), slog.String("missing_permission", ru.Missing), slog.Any("error", err))
				return r.fetched(ctx, ru, found, ru.cursor)
			case err != nil:
				stop = err
			default:
				ru.Found++
				found = append(found, f)
			}
			if stop != nil {
				break
			}
			fetched++
			ru.cursor = id
		}
		if err := r.fetched(ctx, ru, found, ru.cursor); err != nil || stop != nil {
			return errors.Join(stop, err)
		}
	}
	// More may remain than one run fetches: the next goes on from here.
	return errIncomplete
}

// errIncomplete: the run stopped at one of its own bounds (MaxFetches),
// not because anything failed; the next resumes.
var errIncomplete = errors.New("reconcile: the run reached its limit of fetched objects; the next run goes on")

// fetched enters one page of fetched states and saves the fetch cursor.
func (r *Runner) fetched(ctx context.Context, ru *run, found []provider.Found, cursor string) error {
	c := corrections{}
	if len(found) > 0 {
		if err := r.enter(ctx, ru, found, &c); err != nil {
			return err
		}
	}
	return r.save(ctx, ru, cursor, c)
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
