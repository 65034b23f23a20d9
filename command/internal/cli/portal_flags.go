package cli

import (
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/pipeline"
)

// PortalFlags configure the portal: the console a portal link opens for
// one tenant, on a listener of its own (docs/console.md, Portal).
type PortalFlags struct {
	PortalAddr           string        `name:"portal-addr" env:"SLUICE_PORTAL_ADDR" help:"Portal listen address, meant for the public (never --admin-addr's): the console that portal links open; empty for none. Needs --admin-addr in the same process."`
	PortalURL            string        `name:"portal-url" env:"SLUICE_PORTAL_URL" help:"The portal's public base URL (https://portal.example.com) that minted links start with; empty: a link is its path."`
	PortalTLSCert        string        `name:"portal-tls-cert" env:"SLUICE_PORTAL_TLS_CERT" help:"Serve the portal over HTTPS with this certificate (PEM); its session cookie is Secure either way."`
	PortalTLSKey         string        `name:"portal-tls-key" env:"SLUICE_PORTAL_TLS_KEY" help:"Key for --portal-tls-cert."`
	PortalFrameAncestors []string      `name:"portal-frame-ancestors" env:"SLUICE_PORTAL_FRAME_ANCESTORS" sep:"," help:"Origins (scheme://host[:port]) whose pages may frame the portal (CSP frame-ancestors); empty: it is never framed."`
	PortalLinkTTL        time.Duration `name:"portal-link-ttl" env:"SLUICE_PORTAL_LINK_TTL" default:"10m" help:"How long a portal link stays usable unused (at most 1h)."`
	PortalName           string        `name:"portal-name" env:"SLUICE_PORTAL_NAME" help:"Name heading the portal's pages; empty: Sluice console."`
	PortalLogoURL        string        `name:"portal-logo-url" env:"SLUICE_PORTAL_LOGO_URL" help:"https URL of a logo shown beside the portal's name."`
	PortalAccent         string        `name:"portal-accent" env:"SLUICE_PORTAL_ACCENT" help:"Accent colour of the portal's links and buttons (#rgb or #rrggbb)."`
}

// config is the pipeline's portal; pipeline.Start judges it.
func (f PortalFlags) config() pipeline.PortalConfig {
	return pipeline.PortalConfig{Addr: f.PortalAddr, URL: f.PortalURL, TLSCert: f.PortalTLSCert, TLSKey: f.PortalTLSKey,
		FrameAncestors: f.PortalFrameAncestors, LinkTTL: f.PortalLinkTTL,
		Brand: console.Brand{Name: f.PortalName, LogoURL: f.PortalLogoURL, Accent: f.PortalAccent}}
}
