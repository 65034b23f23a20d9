package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

func (c *Console) sourceRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/sources/{id}", c.signedIn(c.source))
	c.mux.HandleFunc("GET "+Prefix+"/sources/{id}/rotate", c.signedIn(c.rotateForm))
	c.mux.HandleFunc("POST "+Prefix+"/sources/{id}/rotate", c.signedIn(c.rotate))
}

func (c *Console) rotateForm(w http.ResponseWriter, r *http.Request, s Session) error {
	var src tenancy.Source
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/sources/"+url.PathEscape(r.PathValue("id")), nil, nil, &src); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "rotate", view{Title: "Rotate a source's secret", Nav: "sources", Session: &s, Data: src})
	return nil
}

// rotate gives the source a new secret (the form's, or one Sluice makes,
// shown once), the current ones valid for the overlap beside it.
func (c *Console) rotate(w http.ResponseWriter, r *http.Request, s Session) error {
	body := map[string]any{}
	if v := r.PostFormValue("secret"); v != "" {
		body["secret"] = v
	}
	if v := strings.TrimSpace(r.PostFormValue("overlap_hours")); v != "" {
		h, err := strconv.ParseFloat(v, 64)
		if err != nil || h < 0 {
			return refusal.InvalidField("overlap", "a number of hours, at least 0")
		}
		body["overlap_seconds"] = int64(h * 3600)
	}
	id := r.PathValue("id")
	var out struct {
		Secret string `json:"secret"`
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/sources/"+url.PathEscape(id)+"/rotate-secret", nil, body, &out); err != nil {
		return err
	}
	if out.Secret == "" {
		redirect(w, r, "/sources", "secret-rotated", nil)
		return nil
	}
	c.render(w, r, http.StatusOK, "created", view{Title: "Secret rotated", Nav: "sources", Session: &s,
		Data: created{What: "source", ID: id, Secret: out.Secret, Back: Prefix + "/sources"}})
	return nil
}

// sourceData is a source's page: the source, whether it has API
// credentials (then where its reconciliation stands) and its latest runs.
type sourceData struct {
	Source tenancy.Source
	admin.SourceReconciliation
}

// source shows one source with its reconciliation: API credentials
// present or not, the automatic window's position, and the last runs.
func (c *Console) source(w http.ResponseWriter, r *http.Request, s Session) error {
	id := url.PathEscape(r.PathValue("id"))
	var d sourceData
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/sources/"+id, nil, nil, &d.Source); err != nil {
		return err
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/sources/"+id+"/reconcile", url.Values{"limit": {"10"}}, nil, &d.SourceReconciliation); err != nil {
		return err
	}
	c.render(w, r, http.StatusOK, "source", view{Title: "Source " + d.Source.Kind + " " + d.Source.Account, Nav: "sources", Session: &s, Data: d})
	return nil
}
