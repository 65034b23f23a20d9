package console

import (
	"net/http"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// errorClasses are the classes a dead delivery's last request failed with,
// as the retry's filter offers them, each in words.
var errorClasses = []struct{ Value, Label string }{
	{"status", "the endpoint answered, not 2xx"}, {"timeout", "timed out"}, {"connect", "could not connect"}, {"tls", "TLS failed"},
	{"dns", "the name did not resolve"}, {"reset", "connection reset"}, {"refused_address", "an address the policy refuses"},
	{"request", "the request could not be made"}, {"canceled", "canceled"},
	{"transformation", "the endpoint's transformation failed over the event"}, {"other", "another error"},
}

// retryDead is the bulk retry of an endpoint's dead deliveries: the
// selection as the form names it, its dry run's count, then what the
// retry did.
type retryDead struct {
	EndpointID, Since, Until, EventType, ErrorClass string
	Classes                                         []struct{ Value, Label string }
	Count                                           *endpoints.DeadCount
	Done                                            *endpoints.DeadRetried
}

// From and To are the selection's window as times (zero: not named).
func (d retryDead) From() time.Time { return formTime(d.Since) }

// To is the window's end (see From).
func (d retryDead) To() time.Time { return formTime(d.Until) }

// selection is the API's query (or body) for the form's selection.
func (d retryDead) selection() url.Values {
	q := url.Values{"endpoint_id": {d.EndpointID}, "since": {apiTime(d.Since)}, "until": {apiTime(d.Until)}}
	if d.EventType != "" {
		q.Set("event_type", d.EventType)
	}
	if d.ErrorClass != "" {
		q.Set("error_class", d.ErrorClass)
	}
	return q
}

func retryDeadOf(id string, form url.Values) retryDead {
	return retryDead{EndpointID: id, Since: form.Get("since"), Until: form.Get("until"), EventType: form.Get("event_type"),
		ErrorClass: form.Get("error_class"), Classes: errorClasses}
}

// confirmRetryDead counts what a selection would send again (a dry run)
// before the retry may be asked: GET /deliveries/retry-dead/count.
func (c *Console) confirmRetryDead(w http.ResponseWriter, r *http.Request, s Session) error {
	d := retryDeadOf(r.PathValue("id"), r.URL.Query())
	var refusal string
	var err error
	if d.Count, refusal, err = dryRun[endpoints.DeadCount](c, r, s, d.Since != "" || d.Until != "", "/deliveries/retry-dead/count", d.selection()); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "retry-dead", view{Title: "Retry an endpoint's dead deliveries", Nav: "destinations", Session: &s, Error: refusal, Data: d})
	return nil
}

// retryDeadDeliveries sends the confirmed selection again through the API
// and shows what it did (and where the rest starts, past the cap).
func (c *Console) retryDeadDeliveries(w http.ResponseWriter, r *http.Request, s Session) error {
	d := retryDeadOf(r.PathValue("id"), r.PostForm)
	body := map[string]string{}
	for k, v := range d.selection() {
		body[k] = v[0]
	}
	var done endpoints.DeadRetried
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/deliveries/retry-dead", nil, body, &done); err != nil {
		return err
	}
	d.Done = &done
	c.render(w, r, http.StatusOK, "retry-dead", view{Title: "Dead deliveries sent again", Nav: "destinations", Session: &s, Data: d})
	return nil
}
