package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/refusal"
)

// view is what every page template is given.
type view struct {
	Title string
	// Nav names the menu entry the page belongs to.
	Nav     string
	Session *Session
	Error   string
	Notice  string
	Data    any
}

// Operator reports whether the session's token spans tenants (it sees the
// deployment's pages: consumer groups, the slot).
func (v view) Operator() bool { return v.Session != nil && v.Session.TenantID == "" }

// DestinationsOnly reports whether the session is a portal's of scope
// destinations: its menu holds Destinations only.
func (v view) DestinationsOnly() bool {
	return v.Session != nil && v.Session.Portal == admintoken.PortalDestinations
}

// CanAct reports whether the session's token may act (role operate).
func (v view) CanAct() bool { return v.Session != nil && v.Session.Role == "operate" }

// notices are the outcomes an action redirects with (?notice=), so a page
// never repeats text from its URL.
var notices = map[string]string{
	"replayed":           "Dead letter replayed.",
	"conflict-dismissed": "Conflict dismissed: the content that stands is right.", "conflict-resolved": "Conflict marked resolved.",
	"replayed-set":   "Dead letters replayed.",
	"rewound":        "Consumer group rewound.",
	"source-enabled": "Source enabled.", "source-disabled": "Source disabled.",
	"secret-rotated": "Secret rotated.",
	"deprecated":     "Event type deprecated.", "released": "Event type released.",
	"endpoint-created": "Endpoint created.",
	"delivery-retried": "Delivery retried.", "endpoint-replayed": "Deliveries replayed.",
	"endpoint-disabled": "Endpoint disabled.", "endpoint-enabled": "Endpoint enabled.",
	"endpoint-paused": "Endpoint paused: its deliveries are kept and none is sent until it is resumed.", "endpoint-resumed": "Endpoint resumed: what waited is sent in order.",
	"reconcile-started": "Reconciliation run finished.",
}

func (c *Console) parse() error {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return fmt.Errorf("console templates: %w", err)
	}
	c.pages = map[string]*template.Template{}
	for _, n := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if page == "layout" || page == "parts" {
			continue
		}
		t, err := template.New("layout.html").Funcs(c.funcs()).ParseFS(templateFS, "templates/layout.html", "templates/parts.html", n)
		if err != nil {
			return fmt.Errorf("console template %s: %w", n, err)
		}
		c.pages[page] = t
	}
	return nil
}

// render writes page with status; a template that fails renders nothing
// half-way (it is written to a buffer first).
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	if v.Notice == "" {
		v.Notice = notices[r.URL.Query().Get("notice")]
	}
	t, ok := c.pages[page]
	if !ok {
		c.log.ErrorContext(r.Context(), "console page missing", slog.String("page", page))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		c.log.ErrorContext(r.Context(), "console page failed", slog.String("page", page), slog.Any("error", err))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail answers a page or action that could not be done, by what refused
// it: the console's one mapping of internal/refusal to its pages. A caller
// no longer known (refusal.Unauthenticated: the API no longer accepts the
// session's token) ends the session and goes to sign in; any other refusal,
// and any other answer of the API, is the error page with its status (the
// API's own, or the admin table's for the console's own refusals) and
// words; anything else is logged and answered 500. A list's refused
// filters are shown above its form instead (refused).
func (c *Console) fail(w http.ResponseWriter, r *http.Request, s *Session, err error) {
	var apiErr *apiError
	ref, refused := refusal.Of(err)
	switch {
	case refused && ref.Kind == refusal.Unauthenticated:
		if s != nil {
			_ = c.sessions.revoke(r.Context(), *s)
		}
		c.clearCookie(w, r)
		http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
	case errors.As(err, &apiErr):
		c.render(w, r, apiErr.Status, "error", view{Title: http.StatusText(apiErr.Status), Session: s, Error: apiErr.Error()})
	case refused:
		status := admin.AnswerOf(ref).Status
		c.render(w, r, status, "error", view{Title: http.StatusText(status), Session: s, Error: err.Error()})
	default:
		c.log.ErrorContext(r.Context(), "console page failed", slog.Any("error", err), slog.String("path", r.URL.Path))
		c.render(w, r, http.StatusInternalServerError, "error", view{Title: "Error", Session: s,
			Error: "Internal error; the process log has the details."})
	}
}

// redirect answers an action done: back to a page, with a notice.
func redirect(w http.ResponseWriter, r *http.Request, path, notice string, q url.Values) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("notice", notice)
	http.Redirect(w, r, Prefix+path+"?"+q.Encode(), http.StatusSeeOther)
}

// funcs are the templates' helpers; the formatting ones live in format.go.
func (c *Console) funcs() template.FuncMap {
	f := formatFuncs(c.cfg.Now)
	f["prefix"] = func() string { return Prefix }
	f["brand"] = c.brand
	f["list"] = func(s ...string) []string { return s }
	f["act"] = actOf
	f["conflictID"] = operate.ConflictID
	// testable: a filter naming one type, offered for a test event.
	f["testable"] = func(filter string) bool { return !strings.Contains(filter, "*") }
	// retryRest is the query that counts what a bulk retry left: the same
	// selection from where it stopped.
	f["retryRest"] = func(d retryDead, next *time.Time) template.URL {
		q := url.Values{"since": {next.UTC().Format(time.RFC3339)}, "until": {d.Until}, "event_type": {d.EventType}, "error_class": {d.ErrorClass}}
		return template.URL(q.Encode()) //nolint:gosec // every value escaped by Encode
	}
	// qs is a page's query with some values set (the next page's cursor),
	// as a template.URL: a plain string after a link's "?" is escaped as one
	// query value, its "=" and "&" included, and the filter never reached
	// the server. Encode has escaped every key and value already.
	f["qs"] = func(q url.Values, kv ...string) template.URL {
		out := url.Values{}
		for k, v := range q {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				out.Del(kv[i])
				continue
			}
			out.Set(kv[i], kv[i+1])
		}
		return template.URL(out.Encode()) //nolint:gosec // every part escaped by Encode
	}
	return f
}

// refused turns the refusal of a list's filters (refusal.Invalid: the
// API's 422, or its 400) into words shown above the list's form, so the
// filters can be corrected; anything else is the page's error.
func refused(err error) (string, error) {
	if !errors.Is(err, refusal.ErrInvalid) {
		return "", err
	}
	if apiErr := (*apiError)(nil); errors.As(err, &apiErr) {
		return apiErr.Error(), nil // the API's words and each field's
	}
	return err.Error(), nil
}
