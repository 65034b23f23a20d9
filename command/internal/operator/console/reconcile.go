package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
)

func (c *Console) reconcileRoutes() {
	c.mux.HandleFunc("POST "+Prefix+"/reconciliation", c.signedIn(c.reconcile))
}

// reconcileData is a run's answer: a dry run's, shown with the form that
// runs the same window for real, or the run's.
type reconcileData struct {
	Source, Since, Until string
	DryRun               bool
	Report               admin.ReconcileReport
}

// reconcile runs a source's reconciliation over the form's window through
// the API: a dry run unless the form is the confirmation of one.
func (c *Console) reconcile(w http.ResponseWriter, r *http.Request, s Session) error {
	d := reconcileData{Source: strings.TrimSpace(r.PostFormValue("source_id")), Since: r.PostFormValue("since"), Until: r.PostFormValue("until"),
		DryRun: r.PostFormValue("execute") != "true"}
	body := map[string]any{"dry_run": d.DryRun}
	if d.Since != "" {
		body["since"] = apiTime(d.Since)
	}
	if d.Until != "" {
		body["until"] = apiTime(d.Until)
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, "/sources/"+url.PathEscape(d.Source)+"/reconcile", nil, body, &d.Report); err != nil {
		return err
	}
	title := "Reconciliation run"
	if d.DryRun {
		title = "Reconciliation dry run: nothing was entered"
	}
	c.render(w, r, http.StatusOK, "reconcile", view{Title: title, Nav: "reconciliation", Session: &s, Data: d})
	return nil
}
