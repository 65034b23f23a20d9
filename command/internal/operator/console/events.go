package console

import (
	"encoding/json"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

func (c *Console) eventRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/events", c.signedIn(c.events))
	c.mux.HandleFunc("GET "+Prefix+"/events/{id}", c.signedIn(c.trail))
	c.mux.HandleFunc("GET "+Prefix+"/events/{id}/payload", c.signedIn(c.payload))
}

// eventFilters are the search's filters, named as the API names them.
var eventFilters = []string{"event_id", "object_id", "event_type", "status", "source_id", "tenant_id", "since", "until", "cursor", "limit"}

func (c *Console) events(w http.ResponseWriter, r *http.Request, s Session) error {
	// With nothing named, the API lists the newest events (by id, or by
	// the tenant's index for a scoped token): a page's worth of rows
	// whatever the inbox holds, where "the last hour" read all of it.
	q := filters(r, eventFilters...)
	var l list[operate.Event]
	refusal, err := refused(c.call(r.Context(), r, s.Token, http.MethodGet, "/events", q, nil, &l))
	if err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "events", view{Title: "Events", Nav: "events", Session: &s, Error: refusal, Data: newListPage(l, q)})
	return nil
}

// trailData is one event's trail, each section a table of its own.
type trailData struct {
	operate.Trail
	Timeline []step
}

func (c *Console) trail(w http.ResponseWriter, r *http.Request, s Session) error {
	var d trailData
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/events/"+url.PathEscape(r.PathValue("id")), nil, nil, &d.Trail); err != nil {
		return err
	}
	d.Timeline = timeline(d.Trail, s.TenantID == "")
	c.render(w, r, http.StatusOK, "trail", view{Title: "Event " + d.Event.EventID, Nav: "events", Session: &s, Data: d})
	return nil
}

// payloadData is a body as the page shows it: indented when it is JSON,
// as text when it is UTF-8, else its size.
type payloadData struct {
	ID    string
	State operate.PayloadState
	Text  string
	Bytes int
}

func (c *Console) payload(w http.ResponseWriter, r *http.Request, s Session) error {
	var p operate.Payload
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/events/"+url.PathEscape(r.PathValue("id"))+"/payload", nil, nil, &p); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "payload", view{Title: "Payload of event " + r.PathValue("id"), Nav: "events", Session: &s,
		Data: payloadData{ID: r.PathValue("id"), State: p.State, Text: bodyText(p.Body), Bytes: len(p.Body)}})
	return nil
}

// bodyText is a body shown as text: indented JSON, or the text itself, or
// "" for bytes that are no UTF-8.
func bodyText(b []byte) string {
	var v json.RawMessage
	if json.Unmarshal(b, &v) == nil {
		if out, err := json.MarshalIndent(v, "", "  "); err == nil {
			return string(out)
		}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	return ""
}
