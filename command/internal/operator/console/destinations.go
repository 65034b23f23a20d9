package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/command/internal/operator/testevent"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

func (c *Console) destinationRoutes() {
	c.mux.HandleFunc("POST "+Prefix+"/destinations", c.signedIn(c.createEndpoint))
	c.mux.HandleFunc("POST "+Prefix+"/destinations/{id}/test", c.signedIn(c.testEndpoint))
	c.mux.HandleFunc("GET "+Prefix+"/destinations/{id}/replay", c.signedIn(c.confirmReplayWindow))
	c.mux.HandleFunc("POST "+Prefix+"/destinations/{id}/replay", c.signedIn(c.replayEndpointWindow))
	c.mux.HandleFunc("GET "+Prefix+"/deliveries/{id}", c.signedIn(c.delivery))
	c.mux.HandleFunc("GET "+Prefix+"/deliveries/{id}/request", c.signedIn(c.deliveryRequest))
	c.mux.HandleFunc("GET "+Prefix+"/destinations/{id}", c.signedIn(c.endpoint))
	c.mux.HandleFunc("GET "+Prefix+"/destinations/{id}/retry-dead", c.signedIn(c.confirmRetryDead))
	c.mux.HandleFunc("POST "+Prefix+"/destinations/{id}/retry-dead", c.signedIn(c.retryDeadDeliveries))
}

// created is the page after a create whose answer holds a secret shown
// once: it is shown here, this once, never put in a URL.
type created struct {
	What, ID, Secret, Back string
}

// createEndpoint makes an endpoint of the form's tenant (a scoped token:
// its own) and shows its signing secret once.
func (c *Console) createEndpoint(w http.ResponseWriter, r *http.Request, s Session) error {
	tenant := s.TenantID
	if tenant == "" {
		tenant = strings.TrimSpace(r.PostFormValue("tenant_id"))
	}
	body := map[string]any{"url": strings.TrimSpace(r.PostFormValue("url")), "filters": strings.Fields(strings.ReplaceAll(r.PostFormValue("filters"), ",", " "))}
	if d := strings.TrimSpace(r.PostFormValue("description")); d != "" {
		body["description"] = d
	}
	var out struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/tenants/"+url.PathEscape(tenant)+"/endpoints", nil, body, &out); err != nil {
		return err
	}
	c.render(w, r, http.StatusCreated, "created", view{Title: "Endpoint created", Nav: "destinations", Session: &s,
		Data: created{What: "endpoint", ID: out.ID, Secret: out.Secret, Back: Prefix + "/destinations?tenant_id=" + url.QueryEscape(tenant)}})
	return nil
}

// deliveryData is one delivery with every request made to its endpoint.
type deliveryData struct {
	D endpoints.Delivery
}

// delivery shows one delivery: its state, next attempt and each request
// (status, the endpoint's answer, duration, error).
func (c *Console) delivery(w http.ResponseWriter, r *http.Request, s Session) error {
	var d endpoints.Delivery
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/deliveries/"+url.PathEscape(r.PathValue("id")), nil, nil, &d); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "delivery", view{Title: "Delivery " + strconv.FormatInt(d.ID, 10), Nav: "destinations", Session: &s,
		Data: deliveryData{D: d}})
	return nil
}

// requestData is a delivery's latest request as sent, rebuilt, and every
// answer its endpoint gave.
type requestData struct {
	D   endpoints.Delivery
	Req endpoints.RequestAsSent
	// Text is the body as sent when it is UTF-8 (it is shown as it went,
	// not indented: its signatures are over these bytes).
	Text string
}

// deliveryRequest shows a delivery's request as sent (the API rebuilds it;
// reading it is a payload read, audited) above the endpoint's answers.
func (c *Console) deliveryRequest(w http.ResponseWriter, r *http.Request, s Session) error {
	var d requestData
	path := "/deliveries/" + url.PathEscape(r.PathValue("id"))
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, path, nil, nil, &d.D); err != nil {
		return err
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, path+"/request", nil, nil, &d.Req); err != nil {
		return err
	}
	if utf8.Valid(d.Req.Body) {
		d.Text = string(d.Req.Body)
	}
	c.render(w, r, http.StatusOK, "request", view{Title: "The request of delivery " + strconv.FormatInt(d.D.ID, 10), Nav: "destinations",
		Session: &s, Data: d})
	return nil
}

// testData is what the endpoint answered a test event, and what was sent.
type testData struct {
	EndpointID, TenantID string
	Attempt              endpoints.Attempt
	Sent                 testevent.Example
}

// testEndpoint sends the endpoint a test event through the API and shows
// the request's outcome: status, duration, error and the answer's start.
func (c *Console) testEndpoint(w http.ResponseWriter, r *http.Request, s Session) error {
	id := r.PathValue("id")
	var out struct {
		endpoints.Attempt
		testevent.Example
	}
	body := map[string]string{}
	if t := strings.TrimSpace(r.PostFormValue("event_type")); t != "" {
		body["event_type"] = t
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/endpoints/"+url.PathEscape(id)+"/test", nil, body, &out); err != nil {
		return err
	}
	at := out.Attempt
	title := "Test event: the endpoint answered " + strconv.Itoa(at.Status)
	if !at.OK() {
		title = "Test event failed"
	}
	c.render(w, r, http.StatusOK, "test", view{Title: title, Nav: "destinations", Session: &s,
		Data: testData{EndpointID: id, TenantID: r.PostFormValue("tenant_id"), Attempt: at, Sent: out.Example}})
	return nil
}

// replayWindow is the page of an endpoint's replay: the window's form,
// and once a window is named, the dry run's count with the form that
// replays it; after the replay, what it did.
type replayWindow struct {
	EndpointID, Since, Until string
	Count                    *endpoints.ReplayCount
	Done                     *endpoints.Replayed
}

// From and To are the window's ends as times, for the page to write
// (zero: not named, or no time).
func (d replayWindow) From() time.Time { return formTime(d.Since) }

// To is the window's end (see From).
func (d replayWindow) To() time.Time { return formTime(d.Until) }

// formTime reads a form's time as apiTime does; zero for anything else.
func formTime(v string) time.Time {
	t, _ := time.Parse(time.RFC3339, apiTime(v))
	return t
}

// confirmReplayWindow shows the window's form, and when since and until
// are named, how many deliveries the replay would send (the API's dry run).
func (c *Console) confirmReplayWindow(w http.ResponseWriter, r *http.Request, s Session) error {
	d := replayWindow{EndpointID: r.PathValue("id"), Since: r.URL.Query().Get("since"), Until: r.URL.Query().Get("until")}
	q := url.Values{"endpoint_id": {d.EndpointID}, "since": {apiTime(d.Since)}, "until": {apiTime(d.Until)}}
	var refusal string
	var err error
	if d.Count, refusal, err = dryRun[endpoints.ReplayCount](c, r, s, d.Since != "" || d.Until != "", "/deliveries/replay/count", q); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "replay-window", view{Title: "Replay an endpoint's window", Nav: "destinations", Session: &s, Error: refusal, Data: d})
	return nil
}

// replayEndpointWindow replays the confirmed window through the API and
// shows what it did (and where the rest starts, past the cap).
func (c *Console) replayEndpointWindow(w http.ResponseWriter, r *http.Request, s Session) error {
	d := replayWindow{EndpointID: r.PathValue("id"), Since: r.PostFormValue("since"), Until: r.PostFormValue("until")}
	body := map[string]string{"endpoint_id": d.EndpointID, "since": apiTime(d.Since), "until": apiTime(d.Until)}
	var done endpoints.Replayed
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/deliveries/replay", nil, body, &done); err != nil {
		return err
	}
	d.Done = &done
	c.render(w, r, http.StatusOK, "replay-window", view{Title: "Deliveries replayed", Nav: "destinations", Session: &s, Data: d})
	return nil
}

// dryRun asks an endpoint's count route (path) for what a selection (q)
// holds, once the form named a window; before that it only asks whether
// the token sees the endpoint (404 before any window). A refusal of the
// selection comes back as words for the page.
func dryRun[T any](c *Console, r *http.Request, s Session, named bool, path string, q url.Values) (*T, string, error) {
	if !named {
		return nil, "", c.call(r.Context(), r, s.Token, http.MethodGet, "/endpoints/"+url.PathEscape(q.Get("endpoint_id")), nil, nil, nil)
	}
	var n T
	refusal, err := refused(c.call(r.Context(), r, s.Token, http.MethodGet, path, q, nil, &n))
	if err != nil || refusal != "" {
		return nil, refusal, err
	}
	return &n, "", nil
}
