package endpoints

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/eventfilter/eventtransform"
)

var (
	//go:embed sql/rule_version.sql
	ruleVersionSQL string
	//go:embed sql/last_events.sql
	lastEventsSQL string
)

// Trial is what a transformation yielded when it was set, and over what.
type Trial struct {
	On      string          `json:"on" enum:"sample,event,none" doc:"What the transformation was tried on: sample (the transformation_sample of the request), event (the tenant's last event of a type the endpoint takes) or none (the tenant has no such event yet: it was only checked)."`
	EventID string          `json:"event_id,omitempty" doc:"The event tried on (on: event)."`
	Output  json.RawMessage `json:"output,omitempty" doc:"The body it yielded: what the endpoint would have been sent."`
}

// The trial's subjects.
const (
	TriedOnSample = "sample"
	TriedOnEvent  = "event"
	TriedOnNone   = "none"
)

// trialWindow is how many of the tenant's latest events are looked through
// for one of a type the endpoint takes.
const trialWindow = 200

// checkTransformation judges a transformation's text (it compiles and
// yields a map) and its sample (a JSON body).
func checkTransformation(text string, sample []byte) error {
	if text == "" {
		if sample != nil {
			return invalid("transformation_sample", "is tried on a transformation: set one with it")
		}
		return nil
	}
	if !utf8.ValidString(text) || strings.ContainsRune(text, 0) {
		return invalid("transformation", "must be UTF-8 text without NUL")
	}
	if _, err := eventtransform.Compile(text); err != nil {
		return err
	}
	if sample == nil {
		return nil
	}
	if len(sample) > eventfilter.MaxBody {
		return invalid("transformation_sample", "%d bytes, at most %d", len(sample), eventfilter.MaxBody)
	}
	if !json.Valid(sample) {
		return invalid("transformation_sample", "is not JSON")
	}
	return nil
}

// tryTransformation applies text (checked) to sample, or else to tenant's
// last event of a type filters take, and refuses it with its reason when
// it fails there: a transformation that fails on the events it is meant
// for would make every delivery dead. No transformation: no trial.
func (s Store) tryTransformation(ctx context.Context, tenant string, filters []string, text string, sample []byte) (*Trial, error) {
	if text == "" {
		return nil, nil
	}
	prg, err := eventtransform.Compile(text)
	if err != nil {
		return nil, err
	}
	trial := &Trial{On: TriedOnSample}
	ev := eventfilter.Event{ID: "sample", TenantID: tenant, Time: time.Now(), Body: sample}
	if len(filters) > 0 {
		ev.Type = filters[0]
	}
	if sample == nil {
		var found bool
		if ev, found, err = s.lastEvent(ctx, tenant, filters); err != nil {
			return nil, err
		}
		if !found {
			return &Trial{On: TriedOnNone}, nil
		}
		trial.On, trial.EventID = TriedOnEvent, ev.ID
	}
	out, err := prg.Apply(eventfilter.NewVars(ev))
	if err != nil {
		if trial.On == TriedOnEvent {
			return nil, invalid("transformation", "over the tenant's last event of its types (%s, %s): %v", ev.ID, ev.Type, err)
		}
		return nil, invalid("transformation", "over the sample: %v", err)
	}
	trial.Output = out
	return trial, nil
}

// tryPatchedTransformation tries the transformation p sets on endpoint id
// (with the filters p sets, or else its own).
func (s Store) tryPatchedTransformation(ctx context.Context, id string, p Patch, filters []string) (*Trial, error) {
	if deref(p.Transformation) == "" {
		return nil, nil
	}
	e, err := s.GetEndpoint(ctx, id)
	if err != nil {
		return nil, err
	}
	if filters == nil {
		filters = e.Filters
	}
	return s.tryTransformation(ctx, e.TenantID, filters, *p.Transformation, p.TransformationSample)
}

// lastEvent is tenant's latest event, among its last trialWindow, of a
// type filters take, as the fan-out lays it out; false when there is none.
func (s Store) lastEvent(ctx context.Context, tenant string, filters []string) (eventfilter.Event, bool, error) {
	rows, err := s.Pool.Query(ctx, lastEventsSQL, tenant, trialWindow, eventfilter.MaxBody)
	if err != nil {
		return eventfilter.Event{}, false, fmt.Errorf("read the tenant's last events: %w", err)
	}
	var (
		ev               eventfilter.Event
		source, object   string
		at               *time.Time
		found            bool
		errFound         = errors.New("found")
		id, typ, account string
		body             []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &typ, &source, &object, &at, &account, &body}, func() error {
		if !MatchesAny(filters, typ) {
			return nil
		}
		ev = eventfilter.Event{ID: id, Type: typ, Source: envelope.SourceURI(tenant, source), Subject: object,
			TenantID: tenant, SourceAccount: account, Body: body}
		if at != nil {
			ev.Time = *at
		}
		found = true
		return errFound
	})
	if err != nil && !errors.Is(err, errFound) {
		return ev, false, fmt.Errorf("read the tenant's last events: %w", err)
	}
	return ev, found, nil
}
