// Package console is Sluice's browser console, served under /console on
// the admin listener: operators (an unscoped admin token) see the
// deployment, a tenant-scoped token sees its tenant, each doing in a
// browser what the admin API lets its token do, and nothing more.
//
// The invariants it keeps:
//   - every figure and every action goes through the admin API, called in
//     process with the session's own token (call): the API's role check,
//     the global routes' 403, the tenant confinement and the audit apply
//     unchanged, and the console never reads a store for tenant data;
//   - a session lives in Postgres (console_sessions), is found by the
//     SHA-256 of its cookie's secret, holds its token sealed under a key
//     derived from that secret, ends no later than its token, on sign-out,
//     and as soon as its token is revoked or expires;
//   - the cookie is HttpOnly, SameSite=Strict, Secure over TLS, scoped to
//     /console; every POST carries the session's CSRF token (and a
//     cross-origin Origin is refused), or nothing is done;
//   - pages are html/template rendered on the server and work without
//     JavaScript (forms, POST-redirect-GET); the only script is
//     static/console.js (times into the viewer's zone), under a CSP with no
//     inline script or style; nothing is fetched from the network.
//
// With Config.Portal the same pages are the portal (portal.go): served on
// a listener of its own, signed into only by portal links, with a cookie
// that works in a third-party frame and the frame ancestors a deployment
// names.
package console

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/operator/addrlimit"
)

// Prefix is where the console lives on the admin listener.
const Prefix = "/console"

// CSP is every page's Content-Security-Policy: the console's own script
// and stylesheet, images inline (the charts are SVG in the page), requests
// to itself only (a page refreshing its figures), forms posting to the
// console only, never framed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'"

// DefaultSessionTTL is how long a session lasts unless its token ends
// sooner: a working day.
const DefaultSessionTTL = 12 * time.Hour

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config is what the console serves from.
type Config struct {
	// Pool holds the sessions (and the admin tokens they refer to).
	Pool *pgxpool.Pool
	// API is the admin listener's handler: the console asks it, in
	// process, for everything it shows and does.
	API http.Handler
	// SessionTTL bounds a session (default DefaultSessionTTL); its token's
	// expiry bounds it too.
	SessionTTL time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Health runs the readiness checks of the stages this process runs,
	// for the overview's strip (nil: the strip judges every stage by what
	// it reads in Postgres and Kafka alone).
	Health func(context.Context) []StageHealth
	// Refresh is how often the overview asks for its figures again
	// (default DefaultRefresh).
	Refresh time.Duration
	// Portal, when set, makes this console the portal (portal.go): served
	// on the portal listener, signed into by portal links only.
	Portal *Portal
}

// DefaultRefresh is how often the overview refreshes: the samples behind
// its charts are taken as often.
const DefaultRefresh = 15 * time.Second

// Console is the console's handlers.
type Console struct {
	cfg      Config
	log      *slog.Logger
	sessions sessions
	pages    map[string]*template.Template
	mux      *http.ServeMux
	// opens charges each use of a portal link to its client's address
	// (nil: no portal).
	opens *addrlimit.Limiter
}

// Register serves the console under Prefix on e, the admin listener's
// engine, asking cfg.API (normally e itself) for its data.
func Register(e *gin.Engine, cfg Config, log *slog.Logger) (*Console, error) {
	c, err := New(cfg, log)
	if err != nil {
		return nil, err
	}
	h := gin.WrapH(c)
	e.Any(Prefix, h)
	e.Any(Prefix+"/*rest", h)
	return c, nil
}

// New builds the console's handler.
func New(cfg Config, log *slog.Logger) (*Console, error) {
	if cfg.Pool == nil || cfg.API == nil {
		return nil, errors.New("console: a pool and the admin API are required")
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if p := cfg.Portal; p != nil {
		if err := errors.Join(CheckFrameAncestors(p.FrameAncestors), CheckBrand(p.Brand)); err != nil {
			return nil, err
		}
	}
	c := &Console{cfg: cfg, log: log.With(slog.String("component", "console")), sessions: sessions{pool: cfg.Pool},
		mux: http.NewServeMux()}
	if p := cfg.Portal; p != nil {
		p.OpenRate, p.OpenBurst = cmp.Or(p.OpenRate, DefaultOpenRate), cmp.Or(p.OpenBurst, DefaultOpenBurst)
		c.opens = addrlimit.New(p.OpenRate, p.OpenBurst)
	}
	if err := c.parse(); err != nil {
		return nil, err
	}
	c.routes()
	return c, nil
}

// ServeHTTP answers a request under Prefix with the headers every answer
// carries.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	c.frameHeaders(h)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if h.Get("Cache-Control") == "" {
		h.Set("Cache-Control", "no-store")
	}
	c.mux.ServeHTTP(w, r)
}

func (c *Console) static() http.Handler {
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(fmt.Sprintf("console: embedded static files: %v", err)) // the embed directive guarantees the folder
	}
	files := http.StripPrefix(Prefix+"/static/", http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		files.ServeHTTP(w, r)
	})
}
