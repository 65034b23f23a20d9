package console

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
)

// CookieName is the session's cookie.
const CookieName = "sluice_console"

// CSRFField is the hidden field of every form holding the session's CSRF
// token.
const CSRFField = "csrf"

// handler is a page or action of a signed-in session.
type handler func(w http.ResponseWriter, r *http.Request, s Session) error

// signedIn runs h for a live session, after the checks every request
// passes: no session sends the browser to sign in; a POST must come from
// the console's own origin and carry the session's CSRF token, or it is
// refused (403) before anything is done.
func (c *Console) signedIn(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, err := c.session(r)
		if errors.Is(err, ErrNoSession) {
			to := Prefix + "/sign-in"
			if next := r.URL.RequestURI(); r.Method == http.MethodGet && returnTo(next) != Prefix+"/" {
				to += "?" + url.Values{"next": {next}}.Encode()
			}
			http.Redirect(w, r, to, http.StatusSeeOther)
			return
		}
		if err != nil {
			c.fail(w, r, nil, err)
			return
		}
		if r.Method == http.MethodPost && !c.formTrusted(r, s.CSRF) {
			c.render(w, r, http.StatusForbidden, "error", view{Title: "Refused", Session: &s,
				Error: "This form did not carry the session's CSRF token (or came from another site): nothing was done. Reload the page and try again."})
			return
		}
		if answered, err := c.namedTenant(w, r, s); answered || err != nil {
			if err != nil {
				c.fail(w, r, &s, err)
			}
			return
		}
		if err := h(w, r, s); err != nil {
			c.fail(w, r, &s, err)
		}
	}
}

// session is the request's live session.
func (c *Console) session(r *http.Request) (Session, error) {
	ck, err := r.Cookie(c.cookieName())
	if err != nil {
		return Session{}, ErrNoSession
	}
	return c.sessions.find(r.Context(), ck.Value)
}

// formTrusted: a POST from this origin carrying want as its CSRF token.
func (c *Console) formTrusted(r *http.Request, want string) bool {
	if !sameOrigin(r) {
		return false
	}
	got := r.PostFormValue(CSRFField)
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// sameOrigin refuses a request a browser says comes from another site:
// Sec-Fetch-Site when the browser sends it (every current one does),
// else Origin. One that says neither (a non-browser client) is judged by
// its CSRF token alone.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin" || site == "none"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

func (c *Console) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, err := c.session(r); err == nil {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
		return
	}
	c.render(w, r, http.StatusOK, "sign-in", view{Title: "Sign in", Data: returnTo(r.URL.Query().Get("next"))})
}

// returnTo is where a sign-in goes: the console page the browser asked
// for before it had a session (next), when next is a path of the console
// on this origin and nothing else (no scheme, no host, no "//" or "\\" a
// browser would read as another host, no ".." out of the console);
// otherwise the overview. Never an open redirect.
func returnTo(next string) string {
	home := Prefix + "/"
	u, err := url.Parse(next)
	if err != nil || next == "" || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") {
		return home
	}
	if clean := path.Clean(u.Path); clean != u.Path || !strings.HasPrefix(u.Path, home) || strings.HasPrefix(u.Path, Prefix+"/sign-") {
		return home
	}
	return u.RequestURI()
}

// signIn starts a session for the token the form carries. The admin API
// judges the token (a request for the overview, so the failed-
// authentication limiter charges a wrong one to the browser's address);
// only then is its record read, for its id, scope and expiry.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		c.render(w, r, http.StatusForbidden, "sign-in", view{Title: "Sign in", Data: returnTo(r.PostFormValue("next")), Error: "A sign-in from another site is refused."})
		return
	}
	token := r.PostFormValue("token")
	var apiErr *apiError
	err := c.call(r.Context(), r, token, http.MethodGet, "/overview", nil, nil, nil)
	if errors.As(err, &apiErr) && (errors.Is(err, refusal.ErrUnauthenticated) || errors.Is(err, refusal.ErrLimited)) {
		c.render(w, r, apiErr.Status, "sign-in", view{Title: "Sign in", Data: returnTo(r.PostFormValue("next")), Error: apiErr.Error()})
		return
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	rec, err := admintoken.Store{Pool: c.cfg.Pool}.Authenticate(r.Context(), token)
	if err != nil {
		c.render(w, r, http.StatusUnauthorized, "sign-in", view{Title: "Sign in", Data: returnTo(r.PostFormValue("next")), Error: "missing, unknown, revoked or expired admin token"})
		return
	}
	expires := c.cfg.Now().Add(c.cfg.SessionTTL)
	if rec.ExpiresAt != nil && rec.ExpiresAt.Before(expires) {
		expires = *rec.ExpiresAt
	}
	value, err := c.sessions.create(r.Context(), token, rec, expires)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.audit(r.Context(), rec.ID, rec.TenantID, "console.sign_in")
	c.setCookie(w, r, value, expires)
	http.Redirect(w, r, returnTo(r.PostFormValue("next")), http.StatusSeeOther)
}

// signOut ends the session in Postgres (the cookie alone is worthless
// from now on) and clears the cookie.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request, s Session) error {
	if err := c.sessions.revoke(r.Context(), s); err != nil {
		return err
	}
	c.audit(r.Context(), s.TokenID, s.TenantID, "console.sign_out")
	c.clearCookie(w, r)
	http.Redirect(w, r, Prefix+"/sign-in", http.StatusSeeOther)
	return nil
}

// audit records a session's start or end, as the API records its actions.
func (c *Console) audit(ctx context.Context, tokenID, tenantID, action string) {
	actor := &audit.Actor{TokenID: tokenID}
	if err := actor.Record(ctx, c.cfg.Pool, audit.Target{Action: action, Resource: "console_session", ID: tokenID, TenantID: tenantID}); err != nil {
		c.log.ErrorContext(ctx, "audit record lost", "error", err, "action", action)
	}
}
