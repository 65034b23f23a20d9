package pipeline

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/internal/listen"
)

// PortalConfig is the portal: the console a portal link opens for one
// tenant (docs/console.md, Portal), on a listener of its own meant for the
// public, never the admin listener that also serves /metrics and profiles.
type PortalConfig struct {
	// Addr is the portal's listener; empty: no portal.
	Addr string
	// URL is the portal's public base URL (https://portal.example.com),
	// which the links the admin API mints start with; empty: a link is its
	// path, to be put after the portal's address.
	URL            string
	TLSCert        string
	TLSKey         string
	FrameAncestors []string
	// LinkTTL is how long a link stays usable unused (default 10
	// minutes, at most an hour).
	LinkTTL time.Duration
	Brand   console.Brand
}

func (p PortalConfig) validate(adminAddr, httpAddr string) error {
	if p.Addr == "" {
		return nil
	}
	if adminAddr == "" {
		return errors.New("--portal-addr needs the admin API in this process (--admin-addr): the portal asks it, in process, for every page")
	}
	// (Port 0, a port the system picks, is a listener of its own too.)
	if !strings.HasSuffix(p.Addr, ":0") && (p.Addr == adminAddr || p.Addr == httpAddr) {
		return errors.New("--portal-addr must be a listener of its own, neither --admin-addr nor --http-addr")
	}
	if p.LinkTTL < 0 || p.LinkTTL > portallink.MaxTTL {
		return errors.New("--portal-link-ttl must be positive and at most an hour")
	}
	return errors.Join(console.CheckFrameAncestors(p.FrameAncestors), console.CheckBrand(p.Brand))
}

// adminPortal is what the admin API needs to mint links for this portal.
func (p PortalConfig) adminPortal() admin.PortalConfig {
	return admin.PortalConfig{URL: p.URL, LinkTTL: p.LinkTTL}
}

// portalStage binds the portal's listener, whose console asks api (the
// admin API's handler, never served here) in process with each portal
// session's own token. It serves the console's routes, /healthz and
// /readyz, and nothing of the admin listener.
func (a *assembly) portalStage(api http.Handler) error {
	p := a.cfg.Portal
	if p.Addr == "" {
		return nil
	}
	srv := listen.NewPublic(p.Addr, a.log.With("listener", "portal"), nil, false)
	_, err := console.Register(srv.Engine, console.Config{Pool: a.adminPool, API: api,
		Portal: &console.Portal{Links: portallink.Store{Pool: a.adminPool}, FrameAncestors: p.FrameAncestors, Brand: p.Brand}}, a.log)
	if err != nil {
		return err
	}
	if p.TLSCert != "" {
		srv.UseTLS(p.TLSCert, p.TLSKey)
	}
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	a.portalLn = ln
	a.closers = append(a.closers, func() { _ = ln.Close() })
	a.stages = append(a.stages, stage{name: "portal", run: func(ctx context.Context) error {
		return srv.Serve(ctx, ln, a.cfg.ShutdownGrace)
	}})
	return nil
}

// portalAddr is where the portal listener is; nil without one.
func (a *assembly) portalAddr() net.Addr {
	if a.portalLn == nil {
		return nil
	}
	return a.portalLn.Addr()
}
