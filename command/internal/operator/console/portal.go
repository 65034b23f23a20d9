package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/addrlimit"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
)

// PortalCookieName is the portal session's cookie.
const PortalCookieName = "sluice_portal"

// Portal makes a console the portal: the console served on the portal
// listener (never the admin one), signed into only by portal links
// (internal/operator/portallink), for the tenant and within the scope and
// access each link names, which the admin API enforces on every call.
//
// What differs from the operators' console:
//   - no sign-in with an admin token: GET portallink.OpenPath shows a page
//     whose script posts the link's secret (from the URL's fragment, which
//     no server and no Referer ever sees) back to it, and only that POST
//     uses the link; every page says Referrer-Policy: no-referrer;
//   - the session's cookie is SameSite=None; Secure; Partitioned, so it is
//     sent from inside an operator's page on another site (a third-party
//     frame), and kept apart per top-level site (CHIPS): the session opened
//     in one operator's frame exists nowhere else. Forms keep the console's
//     CSRF token and same-origin check;
//   - frame-ancestors names FrameAncestors (none: 'none'); X-Frame-Options,
//     which can name no list, is sent (DENY) only when no origin may frame
//     it;
//   - Brand names the view, shows a logo and colours it.
type Portal struct {
	// Links are the links a visitor signs in with.
	Links portallink.Store
	// FrameAncestors are the origins (scheme://host[:port], a host may
	// start with "*.") whose pages may frame the portal; none: never
	// framed. CheckFrameAncestors judges them.
	FrameAncestors []string
	// Brand is the deployment's branding; zero: Sluice's.
	Brand Brand
	// OpenRate and OpenBurst bound the uses of links per client address
	// (each use, a guess or not, costs a look-up): a token bucket of
	// OpenBurst refilled OpenRate a second; past it, 429 with Retry-After.
	// Zero: DefaultOpenRate, DefaultOpenBurst.
	OpenRate  float64
	OpenBurst int
}

// The default budget of link uses per client address: 20 at once, then
// one a second. A visitor uses one link per session; behind a proxy every
// visitor is the proxy's address, so the budget is the deployment's.
const (
	DefaultOpenRate  = 1.0
	DefaultOpenBurst = 20
)

// Brand is a deployment's branding of the portal.
type Brand struct {
	// Name heads every page instead of "Sluice console".
	Name string
	// LogoURL is an https image shown beside the name (the CSP allows its
	// origin's images).
	LogoURL string
	// Accent is a colour (#rgb or #rrggbb) for links and buttons.
	Accent string
}

var (
	originHost = regexp.MustCompile(`^(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$`)
	accent     = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
)

// CheckFrameAncestors refuses what is no origin: each must be http or
// https, a host (optionally "*." and a port) and nothing else, so nothing
// a flag says can add a directive to the CSP.
func CheckFrameAncestors(origins []string) error {
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || !originHost.MatchString(u.Host) ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(o, "/") {
			return fmt.Errorf("portal frame ancestor %q: want an origin, scheme://host[:port]", o)
		}
	}
	return nil
}

// CheckBrand refuses a logo that is no https URL and a colour that is no
// #rgb or #rrggbb.
func CheckBrand(b Brand) error {
	if b.LogoURL != "" {
		u, err := url.Parse(b.LogoURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.ContainsAny(b.LogoURL, " ;'\"") {
			return fmt.Errorf("portal logo %q: want an https URL", b.LogoURL)
		}
	}
	if b.Accent != "" && !accent.MatchString(b.Accent) {
		return fmt.Errorf("portal accent %q: want #rgb or #rrggbb", b.Accent)
	}
	return nil
}

// csp is the Content-Security-Policy of every answer.
func (c *Console) csp() string {
	p := c.cfg.Portal
	if p == nil {
		return CSP
	}
	ancestors := "'none'"
	if len(p.FrameAncestors) > 0 {
		ancestors = strings.Join(p.FrameAncestors, " ")
	}
	img := "'self' data:"
	if u, err := url.Parse(p.Brand.LogoURL); err == nil && p.Brand.LogoURL != "" {
		img += " " + u.Scheme + "://" + u.Host
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src " + img + "; connect-src 'self'; form-action 'self'; " +
		"frame-ancestors " + ancestors + "; base-uri 'none'"
}

// frameHeaders are the headers of every answer that differ in the portal.
func (c *Console) frameHeaders(h http.Header) {
	h.Set("Content-Security-Policy", c.csp())
	if c.cfg.Portal == nil {
		// same-origin, not no-referrer: with no-referrer a browser sends
		// "Origin: null" on the console's own forms.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		return
	}
	// The portal's forms are judged by Sec-Fetch-Site, which every
	// current browser sends, and the CSRF token; no URL of it leaves.
	h.Set("Referrer-Policy", "no-referrer")
	if len(c.cfg.Portal.FrameAncestors) == 0 {
		h.Set("X-Frame-Options", "DENY")
	}
}

// cookieName is the session cookie's name: the portal's differs, so a
// browser holding both never mixes them.
func (c *Console) cookieName() string {
	if c.cfg.Portal != nil {
		return PortalCookieName
	}
	return CookieName
}

// setCookie sets the session's cookie: the console's SameSite=Strict, Secure
// over TLS; the portal's SameSite=None; Secure; Partitioned (a third-party
// frame sends no other).
func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, value string, expires time.Time) {
	ck := &http.Cookie{Name: c.cookieName(), Value: value, Path: Prefix, Expires: expires, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
	if value == "" {
		ck.MaxAge = -1
	}
	if c.cfg.Portal != nil {
		ck.SameSite, ck.Secure, ck.Partitioned = http.SameSiteNoneMode, true, true
	}
	http.SetCookie(w, ck)
}

// clearCookie ends the session's cookie in the browser.
func (c *Console) clearCookie(w http.ResponseWriter, r *http.Request) {
	c.setCookie(w, r, "", time.Unix(0, 0))
}

// brand is the deployment's branding (the portal's; none for the console).
func (c *Console) brand() Brand {
	if c.cfg.Portal == nil {
		return Brand{}
	}
	return c.cfg.Portal.Brand
}

// portalRoutes replace the sign-in routes in the portal.
func (c *Console) portalRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/brand.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		// CheckBrand allowed #rgb or #rrggbb only.
		_, _ = fmt.Fprintf(w, ":root { --accent: %s; }\n", c.cfg.Portal.Brand.Accent)
	})
	c.mux.HandleFunc("GET "+portallink.OpenPath, func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusOK, "portal-open", view{Title: "Opening the portal"})
	})
	c.mux.HandleFunc("POST "+portallink.OpenPath, c.portalOpen)
	c.mux.HandleFunc("GET "+Prefix+"/sign-in", func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, http.StatusUnauthorized, "portal-ended", view{Title: "Session ended"})
	})
}

// portalOpen uses the link the form carries and starts its session.
func (c *Console) portalOpen(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		c.render(w, r, http.StatusForbidden, "portal-ended", view{Title: "Refused", Error: "A portal link opened from another site is refused."})
		return
	}
	if wait, limited := c.opens.Take(addrlimit.ClientAddr(r.RemoteAddr), time.Now()); limited {
		w.Header().Set("Retry-After", addrlimit.RetryAfter(wait))
		c.render(w, r, http.StatusTooManyRequests, "portal-ended", view{Title: "Too many links opened",
			Error: "Too many portal links were opened from this address: wait a moment, then open the link again."})
		return
	}
	used, err := c.cfg.Portal.Links.Use(r.Context(), r.PostFormValue("link"))
	if errors.Is(err, portallink.ErrUnknown) || errors.Is(err, portallink.ErrUsed) || errors.Is(err, portallink.ErrExpired) {
		c.render(w, r, http.StatusForbidden, "portal-ended", view{Title: "Link refused", Error: err.Error()})
		return
	}
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	expires := *used.Token.ExpiresAt
	value, err := c.sessions.create(r.Context(), used.Secret, used.Token, expires)
	if err != nil {
		c.fail(w, r, nil, err)
		return
	}
	c.setCookie(w, r, value, expires)
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

// home is the first page: the overview, or a destinations-only session's
// destinations.
func (c *Console) home(w http.ResponseWriter, r *http.Request, s Session) error {
	if s.Portal == admintoken.PortalDestinations {
		http.Redirect(w, r, Prefix+"/destinations", http.StatusSeeOther)
		return nil
	}
	return c.overview(w, r, s)
}
