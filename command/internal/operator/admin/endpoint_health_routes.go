package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// EndpointHealth is an endpoint's requests over a window, read from the
// deliverer's figures per minute (a day is at most 1,440 rows, whatever
// the endpoint's volume).
type EndpointHealth endpoints.Health

// endpointHealthIn names the window: the last hours hours.
type endpointHealthIn struct {
	EndpointPath
	Hours int `query:"hours" minimum:"1" maximum:"168" default:"24" doc:"The window: the last this many hours (1 to 168, a week)."`
}

// health serves an endpoint's health: requests, delivered and failed, the
// success rate and latency quantiles over a window, and the figures of each
// hour in it (the console's endpoint page).
func (r endpointRouter) health() {
	Handle(r.a, Route{Op: op("get-endpoint-health", http.MethodGet, "/endpoints/{endpoint_id}/health",
		"An endpoint's health over the last hours: requests, delivered, failed, success rate, latency p50 and p99, each hour's figures", "endpoints"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *endpointHealthIn) (*body[EndpointHealth], error) {
			hours := in.Hours
			if hours == 0 {
				hours = 24
			}
			h, err := r.s.Health(ctx, in.EndpointID, time.Now().Add(-time.Duration(hours)*time.Hour))
			return reply(EndpointHealth(h)), err
		})
}
