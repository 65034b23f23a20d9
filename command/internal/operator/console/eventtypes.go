package console

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

func (c *Console) eventTypeRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/event-types/{tenant}/{kind}/{type}", c.signedIn(c.eventTypeVersions))
}

// typeVersion is one version of an event type as its page shows it.
type typeVersion struct {
	Version      int             `json:"version"`
	ResourceType string          `json:"resource_type"`
	Topic        string          `json:"topic"`
	DataSchema   string          `json:"dataschema"`
	Compatible   bool            `json:"compatible"`
	Checked      int             `json:"checked"`
	Status       string          `json:"status"`
	Schema       json.RawMessage `json:"schema"`
	CreatedAt    time.Time       `json:"created_at"`
	// Current is the newest version: the one ingest validates with.
	Current bool `json:"-"`
}

// SchemaText is the version's schema, indented.
func (v typeVersion) SchemaText() string {
	var buf bytes.Buffer
	if json.Indent(&buf, v.Schema, "", "  ") != nil {
		return string(v.Schema)
	}
	return buf.String()
}

// typeVersions is an event type's page: its versions, newest first.
type typeVersions struct {
	TenantID, Kind, Type string
	Status               string
	Versions             []typeVersion
}

// ID is the type's name in a row action's id (tenant/kind/type).
func (d typeVersions) ID() string { return d.TenantID + "/" + d.Kind + "/" + d.Type }

// eventTypeVersions shows every version of one event type: its schema,
// when it was released, and which one is current; the type's status
// (active or deprecated) is the type's, not a version's.
func (c *Console) eventTypeVersions(w http.ResponseWriter, r *http.Request, s Session) error {
	d := typeVersions{TenantID: r.PathValue("tenant"), Kind: r.PathValue("kind"), Type: r.PathValue("type")}
	var l list[typeVersion]
	path := "/tenants/" + url.PathEscape(d.TenantID) + "/event-types/" + url.PathEscape(d.Kind) + "/" + url.PathEscape(d.Type)
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, path, nil, nil, &l); err != nil {
		return err
	}
	newest := 0
	for _, v := range l.Items {
		newest = max(newest, v.Version)
	}
	for i := len(l.Items) - 1; i >= 0; i-- { // the API lists oldest first
		v := l.Items[i]
		v.Current = v.Version == newest
		if v.Current {
			d.Status = v.Status
		}
		d.Versions = append(d.Versions, v)
	}
	c.render(w, r, http.StatusOK, "event-type", view{Title: "Event type " + d.Kind + " " + d.Type, Nav: "sources", Session: &s, Data: d})
	return nil
}
