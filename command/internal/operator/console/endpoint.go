package console

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"
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
	const width, height, bars = 600, 120, 24
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-bars * time.Hour)
	var peak int64
	for _, hr := range h.Hours {
		peak = max(peak, hr.Attempts)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="health-title"><title id="health-title">`+
		`Requests per hour over the last 24 hours: %d in all, %d delivered, %d failed, at most %d in one hour</title>`,
		width, height+14, width, height+14, h.Attempts, h.Delivered, h.Failed, peak)
	fmt.Fprintf(&b, `<line x1="0" y1="%d" x2="%d" y2="%d" stroke="#888" stroke-width="1"/>`, height, width, height)
	yAxis(&b, peak, width, height)
	slot := float64(width) / bars
	for _, hr := range h.Hours {
		i := int(hr.Hour.UTC().Sub(start) / time.Hour)
		if i < 0 || i >= bars || peak == 0 {
			continue
		}
		y := float64(height)
		for _, part := range []struct {
			n    int64
			fill string
			word string
		}{{hr.Delivered, "#2e7d4f", "delivered"}, {hr.Failed, "#b3261e", "failed"}} {
			if part.n == 0 {
				continue
			}
			bh := float64(part.n) / float64(peak) * (height - 4)
			y -= bh
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %d</title></rect>`,
				float64(i)*slot+1, y, slot-2, bh, part.fill, hr.Hour.UTC().Format("15:04 UTC"), part.word, part.n)
		}
	}
	fmt.Fprintf(&b, `<text x="0" y="%d" font-size="11" fill="#444">%s</text><text x="%d" y="%d" font-size="11" fill="#444" text-anchor="end">%s</text></svg>`,
		height+12, start.Format("Jan 2 15:04 UTC"), width, height+12, end.Format("Jan 2 15:04 UTC"))
	return template.HTML(b.String()) //nolint:gosec // built from numbers and fixed words only
}
