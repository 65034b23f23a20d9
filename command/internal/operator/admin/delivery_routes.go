package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// DeliveryRoutes is the resource group of deliveries (internal/store/
// endpoints): each event on its way to each of its tenant's endpoints, one
// with its attempts, a retry of one and a replay of an endpoint's window.
// payloadHorizon bounds a replay's window (0: the lifecycle's default).
// The delivery_id owner confines a scoped token to its tenant's; a replay
// names its endpoint in the body, which the store confines to the token's
// tenant in the replay's transaction.
func DeliveryRoutes(s *endpoints.Store, payloadHorizon time.Duration) func(*API) {
	return func(a *API) {
		a.Owner("delivery_id", "delivery", func(ctx context.Context, id string) (string, error) {
			n, err := parseID(id, "delivery")
			if err != nil {
				return "", err
			}
			tenant, err := s.TenantOfDelivery(ctx, n)
			return tenant, err
		})
		deliveryRoutes(a, s, payloadHorizon)
		deadRoutes(a, s, payloadHorizon)
	}
}

// DeliveryView is a delivery as the API shows it (its own name in the
// document: operate's Delivery is an event's arrival).
type DeliveryView struct {
	endpoints.Delivery
}

func deliveryViews(ds []endpoints.Delivery) []DeliveryView {
	out := make([]DeliveryView, len(ds))
	for i, d := range ds {
		out[i] = DeliveryView{d}
	}
	return out
}

// DeliveryPath names one delivery.
type DeliveryPath struct {
	DeliveryID int64 `path:"delivery_id" minimum:"1" doc:"Delivery id (the id a list of deliveries returns)."`
}

// ReplayBody is the window of an endpoint's deliveries a replay sends again.
type ReplayBody struct {
	EndpointID string    `json:"endpoint_id" format:"uuid" doc:"The endpoint whose deliveries are sent again."`
	Since      time.Time `json:"since" doc:"Deliveries created from this time (RFC 3339), inclusive."`
	Until      time.Time `json:"until" doc:"Deliveries created before this time; after since, and at most the payload horizon (default 7 days) after it."`
}

// Resolve refuses since at or after until.
func (b *ReplayBody) Resolve(huma.Context) []error {
	return checkRange("body.until", b.Since, b.Until)
}

func deliveryRoutes(a *API, s *endpoints.Store, horizon time.Duration) {
	type listIn struct {
		PageQuery
		TimeRange
		TenantID   string `query:"tenant_id" format:"uuid" doc:"Only this tenant's deliveries."`
		EndpointID string `query:"endpoint_id" format:"uuid" doc:"Only this endpoint's (another tenant's endpoint: none)."`
		State      string `query:"state" enum:"pending,delivered,dead" doc:"Only deliveries in this state."`
		EventID    string `query:"event_id" doc:"Only the deliveries of this event id (the provider's, or the API's)."`
		InboxID    int64  `query:"inbox_id" minimum:"1" doc:"Only the deliveries of this inbox row (an event's trail id)."`
	}
	Handle(a, Route{Op: op("list-deliveries", http.MethodGet, "/deliveries",
		"List deliveries of events to endpoints, newest first (created_at bounded by since and until)", "deliveries"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *listIn) (*listOut[DeliveryView], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			items, next, err := s.ListDeliveries(ctx, endpoints.DeliveryFilter{TenantID: tenant, EndpointID: in.EndpointID,
				State: endpoints.DeliveryState(in.State), EventID: in.EventID, InboxID: in.InboxID, Since: in.Since, Until: in.Until,
				After: in.Cursor, Limit: in.Limit})
			return list(deliveryViews(items), next), err
		})
	Handle(a, Route{Op: op("get-delivery", http.MethodGet, "/deliveries/{delivery_id}",
		"One delivery with every request made: the failed ones, and its success", "deliveries"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *DeliveryPath) (*body[DeliveryView], error) {
			d, err := s.Delivery(ctx, in.DeliveryID)
			return reply(DeliveryView{d}), err
		})
	Handle(a, Route{Op: op("get-delivery-request", http.MethodGet, "/deliveries/{delivery_id}/request",
		"A delivery's latest request as sent, rebuilt from the event and the signing inputs: method, URL, headers (signature and static header values masked) and body (a payload read, audited)", "deliveries"),
		Scope: ScopeTenant, Resource: "delivery", Action: "delivery.read_request", Payload: true},
		func(ctx context.Context, c Call, in *DeliveryPath) (*body[endpoints.RequestAsSent], error) {
			r, err := s.SentRequest(ctx, in.DeliveryID)
			return reply(r), err
		})
	Handle(a, Route{Op: op("retry-delivery", http.MethodPost, "/deliveries/{delivery_id}/retry",
		"Send a delivery again now, whatever its state, with the same webhook-id (audited)", "deliveries"),
		Scope: ScopeTenant, Resource: "delivery", Action: "delivery.retry"},
		func(ctx context.Context, c Call, in *DeliveryPath) (*body[DeliveryView], error) {
			d, err := s.As(c.Actor).Retry(ctx, in.DeliveryID)
			return reply(DeliveryView{d}), err
		})
	type countIn struct {
		EndpointID string    `query:"endpoint_id" required:"true" format:"uuid" doc:"The endpoint whose window is counted."`
		Since      time.Time `query:"since" required:"true" doc:"Deliveries created from this time (RFC 3339), inclusive."`
		Until      time.Time `query:"until" required:"true" doc:"Deliveries created before this time; after since, and at most the payload horizon after it."`
	}
	Handle(a, Route{Op: op("count-replay-deliveries", http.MethodGet, "/deliveries/replay/count",
		"The dry run of a replay: how many of an endpoint's deliveries created in [since, until) POST /deliveries/replay would send again now (at most 10000: more says the window holds more); changes nothing", "deliveries"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *countIn) (*body[endpoints.ReplayCount], error) {
			tenant, err := c.TenantFilter("")
			if err != nil {
				return nil, err
			}
			if errs := checkRange("query.until", in.Since, in.Until); errs != nil {
				return nil, huma.Error422UnprocessableEntity("validation failed", errs...)
			}
			n, err := s.CountReplay(ctx, endpoints.ReplayWindow{EndpointID: in.EndpointID, Since: in.Since, Until: in.Until,
				TenantID: tenant, Horizon: horizon})
			return reply(n), err
		})
	replay := op("replay-deliveries", http.MethodPost, "/deliveries/replay",
		"Send an endpoint's deliveries created in [since, until) again, oldest first, at most 10000 a call (next_since says where the rest starts); pending ones keep their schedule (audited)", "deliveries")
	replay.DefaultStatus = http.StatusOK
	Handle(a, Route{Op: replay, Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.replay"},
		func(ctx context.Context, c Call, in *body[ReplayBody]) (*body[endpoints.Replayed], error) {
			// The token's own tenant confines the endpoint: another's is
			// 404, like one that does not exist.
			tenant, err := c.TenantFilter("")
			if err != nil {
				return nil, err
			}
			b := in.Body
			r, err := s.As(c.Actor).Replay(ctx, endpoints.ReplayWindow{EndpointID: b.EndpointID, Since: b.Since, Until: b.Until,
				TenantID: tenant, Horizon: horizon})
			return reply(r), err
		})
}

// DeadSelectionQuery is a bulk retry's selection as the dry run's query
// states it.
type DeadSelectionQuery struct {
	EndpointID string    `query:"endpoint_id" required:"true" format:"uuid" doc:"The endpoint whose dead deliveries are counted."`
	Since      time.Time `query:"since" required:"true" doc:"Deliveries created from this time (RFC 3339), inclusive."`
	Until      time.Time `query:"until" required:"true" doc:"Deliveries created before this time; after since, and at most the payload horizon after it."`
	EventType  string    `query:"event_type" maxLength:"200" pattern:"^(\\*|[a-z0-9_-]+(\\.[a-z0-9_-]+)*(\\.\\*)?)$" doc:"Only deliveries of these event types: an exact type, a prefix ending in .* (stripe.invoice.*), or *."`
	ErrorClass string    `query:"error_class" enum:"status,request,refused_address,dns,connect,timeout,tls,reset,canceled,transformation,other" doc:"Only deliveries whose last failed request failed so: status (the endpoint answered, not 2xx), timeout, connect, tls, dns, reset, refused_address, request, canceled, other."`
}

// DeadSelectionBody is a bulk retry's selection.
type DeadSelectionBody struct {
	EndpointID string    `json:"endpoint_id" format:"uuid" doc:"The endpoint whose dead deliveries are sent again."`
	Since      time.Time `json:"since" doc:"Deliveries created from this time (RFC 3339), inclusive."`
	Until      time.Time `json:"until" doc:"Deliveries created before this time; after since, and at most the payload horizon (default 7 days) after it."`
	EventType  string    `json:"event_type,omitempty" maxLength:"200" pattern:"^(\\*|[a-z0-9_-]+(\\.[a-z0-9_-]+)*(\\.\\*)?)$" doc:"Only deliveries of these event types: an exact type, a prefix ending in .* (stripe.invoice.*), or *; absent: any."`
	ErrorClass string    `json:"error_class,omitempty" enum:"status,request,refused_address,dns,connect,timeout,tls,reset,canceled,transformation,other" doc:"Only deliveries whose last failed request failed so; absent: any."`
}

// Resolve refuses since at or after until.
func (b *DeadSelectionBody) Resolve(huma.Context) []error {
	return checkRange("body.until", b.Since, b.Until)
}

func deadRoutes(a *API, s *endpoints.Store, horizon time.Duration) {
	Handle(a, Route{Op: op("count-dead-deliveries", http.MethodGet, "/deliveries/retry-dead/count",
		"The dry run of a bulk retry: how many of an endpoint's dead deliveries created in [since, until), of event_type, whose last request failed with error_class, POST /deliveries/retry-dead would send again now (at most 10000: more says there are more); changes nothing", "deliveries"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *DeadSelectionQuery) (*body[endpoints.DeadCount], error) {
			tenant, err := c.TenantFilter("")
			if err != nil {
				return nil, err
			}
			if errs := checkRange("query.until", in.Since, in.Until); errs != nil {
				return nil, huma.Error422UnprocessableEntity("validation failed", errs...)
			}
			n, err := s.CountDead(ctx, endpoints.DeadSelection{ReplayWindow: endpoints.ReplayWindow{EndpointID: in.EndpointID,
				Since: in.Since, Until: in.Until, TenantID: tenant, Horizon: horizon}, EventType: in.EventType, ErrorClass: in.ErrorClass})
			return reply(n), err
		})
	retry := op("retry-dead-deliveries", http.MethodPost, "/deliveries/retry-dead",
		"Send an endpoint's dead deliveries again by selection (created in [since, until), event_type, error_class), oldest first, at most 10000 a call (next_since says where the rest starts); count them first with GET /deliveries/retry-dead/count (audited)", "deliveries")
	retry.DefaultStatus = http.StatusOK
	Handle(a, Route{Op: retry, Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.retry_dead"},
		func(ctx context.Context, c Call, in *body[DeadSelectionBody]) (*body[endpoints.DeadRetried], error) {
			tenant, err := c.TenantFilter("")
			if err != nil {
				return nil, err
			}
			b := in.Body
			r, err := s.As(c.Actor).RetryDead(ctx, endpoints.DeadSelection{ReplayWindow: endpoints.ReplayWindow{EndpointID: b.EndpointID,
				Since: b.Since, Until: b.Until, TenantID: tenant, Horizon: horizon}, EventType: b.EventType, ErrorClass: b.ErrorClass})
			return reply(r), err
		})
}
