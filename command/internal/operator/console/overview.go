package console

import (
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"sync"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/cdc"
)

// overviewData is the overview page: the API's overview, and for an
// operator the consumer groups' lag and the slot (each may be away: a
// process without Kafka answers 503, shown as such).
type overviewData struct {
	operate.Overview
	Chart     template.HTML
	Groups    []operate.GroupLag
	GroupsErr string
	Slot      *cdc.SlotStatus
	SlotErr   string
	// Lag is the last hour of the groups' and the slot's lag, as the
	// process sampled it.
	Lag    *lineChart
	LagErr string
	// Health is each stage's state in a word and why (an operator's
	// overview only).
	Health []healthItem
	// RefreshSeconds is how often the page asks for itself again.
	RefreshSeconds int
}

func (c *Console) overview(w http.ResponseWriter, r *http.Request, s Session) error {
	d := overviewData{RefreshSeconds: int(c.cfg.Refresh.Seconds())}
	var here []StageHealth
	// The groups' lag asks Kafka and the slot Postgres, independently of
	// the figures: asked side by side, the page waits for the slowest
	// answer, not for their sum.
	var wg sync.WaitGroup
	if s.TenantID == "" {
		wg.Go(func() { here = c.health(r.Context()) })
		wg.Go(func() {
			var groups struct {
				Items []operate.GroupLag `json:"items"`
			}
			d.GroupsErr = optional(c.call(r.Context(), r, s.Token, http.MethodGet, "/consumer-groups", url.Values{}, nil, &groups))
			d.Groups = groups.Items
		})
		wg.Go(func() {
			var h operate.ProcessSamples
			if d.LagErr = optional(c.call(r.Context(), r, s.Token, http.MethodGet, "/overview/samples", nil, nil, &h)); d.LagErr == "" {
				charts := lagCharts(h, c.cfg.Now())
				d.Lag = &charts
			}
		})
		wg.Go(func() {
			var slot cdc.SlotStatus
			if d.SlotErr = optional(c.call(r.Context(), r, s.Token, http.MethodGet, "/slot", nil, nil, &slot)); d.SlotErr == "" {
				d.Slot = &slot
			}
		})
	}
	err := c.call(r.Context(), r, s.Token, http.MethodGet, "/overview", nil, nil, &d.Overview)
	wg.Wait()
	if err != nil {
		return err
	}
	d.Chart = minuteChart(d.Overview)
	if s.TenantID == "" {
		d.Health = healthStrip(here, d)
	}
	c.render(w, r, http.StatusOK, "overview", view{Title: "Overview", Nav: "overview", Session: &s, Data: d})
	return nil
}

// optional turns the refusal of a part of a page into words shown in its
// place.
func optional(err error) string {
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		return apiErr.Error()
	}
	if err != nil {
		return "unavailable"
	}
	return ""
}
