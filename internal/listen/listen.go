// Package listen holds the two HTTP listeners of a Sluice process. The public
// one carries liveness, the readiness a load balancer asks and whatever
// routes a component adds (ingest adds its webhook routes); the admin one,
// bound to a private address, carries every stage's readiness, Prometheus
// metrics, profiles and the operators' routes. Each owns graceful shutdown:
// on stop it refuses new connections and waits for in-flight requests.
package listen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one readiness dependency, and one line of `sluice doctor`.
type Check struct {
	Name string
	// Stage is the stage that needs it ("ingest", "relay", "consumers",
	// "delivery", "lifecycle", "admin"); empty for every stage.
	Stage string
	// Fn returns nil when the dependency is there. Its error is the whole
	// line an operator reads: what is wrong and what to do about it.
	Fn func(ctx context.Context) error
	// Refuse marks what waiting cannot fix (a privilege, wal_level, the
	// key ring): a process refuses to start while it fails, and Watch logs
	// it at ERROR when it fails later. A dependency that may come back by
	// itself (Kafka away, topics still being created) only makes the
	// process not ready.
	Refuse bool
	// Ingest marks what ingest needs to accept deliveries (Postgres, the
	// key ring). In a process that runs ingest, /readyz asks only these: a
	// load balancer must never take ingest out of rotation because Kafka,
	// which only the relay and consumers need, is away.
	Ingest bool
}

// Refuses reports whether err, this check's, refuses: the check is marked
// Refuse and its error is a verdict, not NoVerdict (Kafka away: no answer
// yet on whether its ACLs allow the stage).
func (c Check) Refuses(err error) bool {
	return err != nil && c.Refuse && !errors.Is(err, errNoVerdict)
}

var errNoVerdict = errors.New("no verdict")

// NoVerdict marks err, a Refuse check's, as the dependency not answering:
// the process is not ready, and neither refuses to start nor logs it at
// ERROR. The text stays err's.
func NoVerdict(err error) error {
	if err == nil {
		return nil
	}
	return noVerdict{err}
}

type noVerdict struct{ error }

func (n noVerdict) Unwrap() []error { return []error{errNoVerdict, n.error} }

// Server is the process's HTTP server.
type Server struct {
	Engine *gin.Engine
	log    *slog.Logger
	addr   string
	tls    struct{ cert, key string }
	wrap   []func(http.Handler) http.Handler
}

// NewPublic builds the listener providers and load balancers reach:
// /healthz and /readyz. With ingest in the process /readyz asks only
// whether ingest can accept (the checks marked Ingest); otherwise every
// check. Nothing here reveals internals: metrics and profiles live on the
// admin listener.
func NewPublic(addr string, log *slog.Logger, checks []Check, ingest bool) *Server {
	e := engine()
	if ingest {
		checks = slices.DeleteFunc(slices.Clone(checks), func(c Check) bool { return !c.Ingest })
	}
	e.GET("/readyz", readiness(checks))
	return &Server{Engine: e, log: log.With(slog.String("listener", "public")), addr: addr}
}

// NewAdmin builds the listener for operators and monitoring: /healthz,
// /readyz running every check of every stage in the process and naming
// each failing one, and /metrics.
func NewAdmin(addr string, log *slog.Logger, gatherer prometheus.Gatherer, checks []Check) *Server {
	e := engine()
	e.GET("/readyz", readiness(checks))
	e.GET("/metrics", gin.WrapH(promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{})))
	return &Server{Engine: e, log: log.With(slog.String("listener", "admin")), addr: addr}
}

func engine() *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.Use(gin.Recovery())
	e.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	return e
}

func readiness(checks []Check) gin.HandlerFunc {
	return func(c *gin.Context) {
		failed := runChecks(c.Request.Context(), checks)
		if len(failed) > 0 {
			c.JSON(http.StatusServiceUnavailable, gin.H{"status": "unavailable", "failed": failed})
			return
		}
		c.JSON(http.StatusOK, gin.H{"status": "ready"})
	}
}

// checkTimeout bounds one readiness probe.
const checkTimeout = 2 * time.Second

// runChecks returns the failures by name.
func runChecks(ctx context.Context, checks []Check) gin.H {
	failed := gin.H{}
	for i, err := range Run(ctx, checks) {
		if err != nil {
			failed[checks[i].Name] = err.Error()
		}
	}
	return failed
}

// Run runs every check at once, each within checkTimeout, so a dependency
// that hangs (Kafka away) is named alone instead of using up the time of
// the checks after it. It returns each check's error, in order.
func Run(ctx context.Context, checks []Check) []error {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, chk := range checks {
		wg.Go(func() { errs[i] = chk.Fn(ctx) })
	}
	wg.Wait()
	return errs
}

// EnableProfiling serves Go's pprof handlers under /debug/pprof/. Off by
// default: profiles reveal internals and cost CPU while taken.
func (s *Server) EnableProfiling() {
	s.Engine.GET("/debug/pprof/*profile", gin.WrapF(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
		case "profile":
			pprof.Profile(w, r)
		case "trace":
			pprof.Trace(w, r)
		case "symbol":
			pprof.Symbol(w, r)
		case "cmdline":
			pprof.Cmdline(w, r)
		default:
			pprof.Index(w, r)
		}
	}))
}

// Wrap puts mw around the whole listener, outside routing: for what must
// see every request first and its answer last (a server span).
func (s *Server) Wrap(mw func(http.Handler) http.Handler) { s.wrap = append(s.wrap, mw) }

// UseTLS serves HTTPS with the given certificate and key files.
func (s *Server) UseTLS(certFile, keyFile string) { s.tls.cert, s.tls.key = certFile, keyFile }

// Listen binds the address now, so callers learn of a taken port at start
// and tests can listen on :0.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", s.addr, err)
	}
	return ln, nil
}

// Serve serves on ln until ctx ends, then stops accepting and waits up to
// grace for in-flight requests to be answered.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	var handler http.Handler = s.Engine
	for _, mw := range s.wrap {
		handler = mw(handler)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Headers are read before anyone is authenticated; providers send
		// a few KiB. net/http's default is 1 MiB per connection.
		MaxHeaderBytes: 64 << 10,
		WriteTimeout:   30 * time.Second,
		IdleTimeout:    120 * time.Second,
	}
	errc := make(chan error, 1)
	go func() {
		var err error
		if s.tls.cert != "" {
			err = srv.ServeTLS(ln, s.tls.cert, s.tls.key)
		} else {
			err = srv.Serve(ln)
		}
		errc <- err
	}()
	s.log.Info("http listening", slog.String("addr", ln.Addr().String()))
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}
