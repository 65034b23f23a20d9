package console

import (
	"encoding/json"
	"net/http"
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

// trailData is one event's trail: the event typed, the rest as tables.
type trailData struct {
	Event        operate.Event
	Verification operate.Verification
	Sections     []section
}

type section struct {
	Title string
	Table table
}

func (c *Console) trail(w http.ResponseWriter, r *http.Request, s Session) error {
	var raw map[string]json.RawMessage
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/events/"+r.PathValue("id"), nil, nil, &raw); err != nil {
		return err
	}
	d := trailData{}
	if err := json.Unmarshal(raw["event"], &d.Event); err != nil {
		return err
	}
	_ = json.Unmarshal(raw["verification"], &d.Verification)
	for _, sec := range []struct{ key, title string }{
		{"deliveries", "Inbox, outbox and Kafka (topic, partition, offset)"}, {"effects", "Effects on its object"}, {"sends", "Sends"},
		{"dead_letters", "Dead letters"}, {"waiting", "Set aside: waiting for a row locked elsewhere"}, {"corrections", "Reconciliation corrections"}, {"destinations", "Destinations: each endpoint's delivery and attempts"},
	} {
		d.Sections = append(d.Sections, section{Title: sec.title, Table: asTable(raw[sec.key])})
	}
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
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/events/"+r.PathValue("id")+"/payload", nil, nil, &p); err != nil {
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
