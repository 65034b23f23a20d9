package console

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// endpointData is an endpoint's page: the endpoint with its figures, and
// its health over the last day.
type endpointData struct {
	E struct {
		endpoints.Endpoint
		Figures endpoints.Stats `json:"figures"`
	}
	Health    endpoints.Health
	HealthErr string
	Chart     template.HTML
}

// endpoint shows one endpoint: its settings and state, what waits, and
// its requests of the last 24 hours (success rate, latency, each hour).
func (c *Console) endpoint(w http.ResponseWriter, r *http.Request, s Session) error {
	id := url.PathEscape(r.PathValue("id"))
	var d endpointData
	var wg sync.WaitGroup
	wg.Go(func() {
		d.HealthErr = optional(c.call(r.Context(), r, s.Token, http.MethodGet, "/endpoints/"+id+"/health", url.Values{"hours": {"24"}}, nil, &d.Health))
	})
	err := c.call(r.Context(), r, s.Token, http.MethodGet, "/endpoints/"+id, nil, nil, &d.E)
	wg.Wait()
	if err != nil {
		return err
	}
	if d.HealthErr == "" {
		d.Chart = hourChart(d.Health, c.cfg.Now())
	}
	c.render(w, r, http.StatusOK, "endpoint", view{Title: "Endpoint " + d.E.URL, Nav: "destinations", Session: &s, Data: d})
	return nil
}

// hourChart draws an endpoint's requests per hour over the last 24 hours
// ending at now: delivered (green) under failed (red), with a scale.
func hourChart(h endpoints.Health, now time.Time) template.HTML {
	const bars = 24
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-bars * time.Hour)
	var stacks [][]segment
	var slots []int
	for _, hr := range h.Hours {
		i := int(hr.Hour.UTC().Sub(start) / time.Hour)
		if i < 0 || i >= bars {
			continue
		}
		at := hr.Hour.UTC().Format("15:04 UTC")
		stacks = append(stacks, []segment{{n: hr.Delivered, fill: "#2e7d4f", title: at + " delivered"}, {n: hr.Failed, fill: "#b3261e", title: at + " failed"}})
		slots = append(slots, i)
	}
	what := fmt.Sprintf("Requests per hour over the last 24 hours: %d in all, %d delivered, %d failed", h.Attempts, h.Delivered, h.Failed)
	return barChart("health-title", what, "in one hour", bars, slots, stacks, start.Format("Jan 2 15:04 UTC"), end.Format("Jan 2 15:04 UTC"))
}
