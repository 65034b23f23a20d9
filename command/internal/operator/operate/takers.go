package operate

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Taker is one of the tenant's enabled endpoints judging the event under
// its filters and expression as they are now: a reading of today's
// endpoints, not a record of what the fan-out decided when the event
// passed (no decision is stored for an event an endpoint did not take;
// what it took has a row in Destinations).
type Taker struct {
	EndpointID string `json:"endpoint_id"`
	// Takes is whether the endpoint would take the event now.
	Takes bool `json:"takes"`
	// Verdict says why: type (its filters do not take the event's type),
	// taken (no expression, or it yields true), declined (false), failed
	// (an error over the event, such as a field it lacks), over_cost
	// (stopped at the cost limit), unusable (the expression does not
	// compile here).
	Verdict string `json:"verdict" enum:"type,taken,declined,failed,over_cost,unusable"`
	// Reason is an error's words (failed, over_cost, unusable).
	Reason string `json:"reason,omitempty"`
}

// takers judges the event by each of its tenant's enabled endpoints as they
// are now, over its envelope and its body (null when it is no longer kept).
func (o *Operator) takers(ctx context.Context, ev eventRow) ([]Taker, error) {
	subs, err := endpoints.Store{Pool: o.pool}.TenantSubscriptions(ctx, ev.TenantID)
	if err != nil {
		return nil, fmt.Errorf("trail: %w", err)
	}
	out := make([]Taker, 0, len(subs))
	if len(subs) == 0 {
		return out, nil
	}
	typ := ev.kind + "." + ev.EventType
	var vars *eventfilter.Vars
	for _, s := range subs {
		t := Taker{EndpointID: s.EndpointID, Verdict: "type"}
		switch {
		case !endpoints.MatchesAny(s.Filters, typ):
		case s.Expression == "":
			t.Takes, t.Verdict = true, "taken"
		default:
			if vars == nil {
				v, err := o.vars(ctx, ev, typ)
				if err != nil {
					return nil, err
				}
				vars = &v
			}
			t = judge(t, s.Expression, *vars)
		}
		out = append(out, t)
	}
	return out, nil
}

// judge evaluates expr over vars for t.
func judge(t Taker, expr string, vars eventfilter.Vars) Taker {
	prg, err := eventfilter.Compile(expr)
	if err != nil {
		t.Verdict, t.Reason = "unusable", err.Error()
		return t
	}
	verdict, err := prg.Eval(vars)
	t.Takes, t.Verdict = verdict == eventfilter.Taken, verdict.String()
	if err != nil {
		t.Reason = err.Error()
	}
	return t
}

// vars are the event's variables as the fan-out laid them out: its
// envelope as ingest wrote it (ce_type, ce_subject, ce_source...) and its
// body.
func (o *Operator) vars(ctx context.Context, ev eventRow, typ string) (eventfilter.Vars, error) {
	p, err := o.payload(ctx, ev.ID, ev.TenantID)
	if err != nil {
		return eventfilter.Vars{}, err
	}
	var at time.Time
	if ev.EventTime != nil {
		at = *ev.EventTime
	}
	return eventfilter.NewVars(eventfilter.Event{ID: ev.EventID, Type: typ, Source: envelope.SourceURI(ev.TenantID, ev.SourceID),
		Subject: ev.ObjectID, Time: at, TenantID: ev.TenantID, SourceAccount: ev.SourceAccount, Body: p.Body}), nil
}
