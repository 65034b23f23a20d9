package console

import (
	"net/http"
	"net/url"
	"strings"
)

func (c *Console) destinationRoutes() {
	c.mux.HandleFunc("POST "+Prefix+"/destinations", c.signedIn(c.createEndpoint))
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
