package delivery

import (
	"context"
	"fmt"
	"sync"

	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/eventfilter/eventtransform"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// transforms keeps each endpoint's transformation compiled: a target is
// read again every refresh, a transformation compiled only when its text
// changes (compiling costs far more than applying).
type transforms struct {
	mu         sync.Mutex
	byEndpoint map[string]compiled
}

// compiled is one endpoint's transformation, or why it does not compile
// here (one written by another release).
type compiled struct {
	text string
	prg  *eventtransform.Program
	err  error
}

// program is t's transformation, compiled.
func (x *transforms) program(t *endpoints.Target) (*eventtransform.Program, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	c, ok := x.byEndpoint[t.ID]
	if !ok || c.text != t.Transformation {
		c = compiled{text: t.Transformation}
		c.prg, c.err = eventtransform.Compile(t.Transformation)
		if x.byEndpoint == nil {
			x.byEndpoint = map[string]compiled{}
		}
		x.byEndpoint[t.ID] = c
	}
	return c.prg, c.err
}

// newerRules is t with the endpoint's rules read now: a delivery created
// under rules newer than those the loop holds (an edit within the last
// refresh) is never sent with older ones. The loop keeps them; a read that
// fails leaves t as it is (its refresh reads them soon).
func (d *Deliverer) newerRules(ctx context.Context, t *endpoints.Target) *endpoints.Target {
	now, ok, err := d.store.Target(ctx, t.ID)
	if err != nil || !ok || now.RulesVersion <= t.RulesVersion {
		return t
	}
	newer := *t
	newer.Transformation, newer.RulesVersion = now.Transformation, now.RulesVersion
	d.replaceTarget(newer)
	return &newer
}

// transform is m as t's transformation makes it: its body the JSON object
// the transformation yields over the event (application/json), signed and
// sent in place of the event's; m itself when t has none, or when m's body
// is gone (the send says so). Its error says why the transformation
// failed: the delivery is dead with it.
func (d *Deliverer) transform(t *endpoints.Target, m message) (message, error) {
	if t.Transformation == "" || m.missing {
		return m, nil
	}
	prg, err := d.transforms.program(t)
	if err != nil {
		return m, fmt.Errorf("transformation of rules version %d does not compile: %w", t.RulesVersion, err)
	}
	ev := eventfilter.Event{ID: m.eventID, Type: m.eventType, Source: m.src, Subject: m.subject, TenantID: m.tenantID, Body: m.body}
	if m.eventTime != nil {
		ev.Time = *m.eventTime
	}
	body, err := prg.Apply(eventfilter.NewVars(ev))
	if err != nil {
		return m, fmt.Errorf("rules version %d: %w", t.RulesVersion, err)
	}
	m.body, m.contentType = body, "application/json"
	return m, nil
}
