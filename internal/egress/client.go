package egress

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// Config is the client's configuration. The zero Config is a client that
// dials public addresses only, with the defaults below.
type Config struct {
	// Policy says which addresses may be dialled.
	Policy Policy
	// ConnectTimeout bounds resolving and connecting, and separately the
	// TLS handshake. Default 5s: an endpoint that cannot accept a
	// connection in 5s is down, and waiting longer holds a worker.
	ConnectTimeout time.Duration
	// Timeout bounds the whole request, reading the answer included.
	// Default 15s.
	Timeout time.Duration
	// TLS is the client's TLS configuration; nil means the system roots.
	// Certificates are always verified: InsecureSkipVerify is turned off
	// whatever this says, since an unverified peer could be anyone the
	// network routes us to.
	TLS *tls.Config
	// MaxConnsPerHost bounds connections to one host, idle or not, so one
	// slow tenant cannot take every socket. Default 0: unlimited.
	MaxConnsPerHost int
}

const (
	defaultConnectTimeout = 5 * time.Second
	defaultTimeout        = 15 * time.Second
	// Idle connections kept, in all and per host: enough to reuse
	// connections to busy endpoints, few enough that thousands of tenants'
	// endpoints do not each hold sockets open.
	maxIdleConns        = 256
	maxIdleConnsPerHost = 8
	idleConnTimeout     = 60 * time.Second
	// An endpoint's answer headers are logged, not interpreted: 64 KiB is
	// more than any honest server sends.
	maxResponseHeaderBytes = 64 << 10
)

// WithDefaults returns the config with zero durations replaced by their
// defaults.
func (c Config) WithDefaults() Config {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = defaultConnectTimeout
	}
	if c.Timeout <= 0 {
		c.Timeout = defaultTimeout
	}
	return c
}

// NewClient returns the client that delivers to tenants' endpoints: it
// dials only addresses cfg.Policy allows (checked on the resolved address
// at connect time, IPv4-mapped IPv6 unmapped first), never uses a proxy
// from the environment, never follows a redirect (the caller gets the 3xx),
// always verifies TLS, and speaks HTTP/2 where the endpoint does.
func NewClient(cfg Config) *http.Client {
	cfg = cfg.WithDefaults()
	d := NewDialer(cfg)
	t := &http.Transport{
		Proxy:                  nil,
		DialContext:            d.DialContext,
		TLSClientConfig:        tlsConfig(cfg.TLS),
		TLSHandshakeTimeout:    cfg.ConnectTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           maxIdleConns,
		MaxIdleConnsPerHost:    maxIdleConnsPerHost,
		MaxConnsPerHost:        cfg.MaxConnsPerHost,
		IdleConnTimeout:        idleConnTimeout,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		// The answer is kept for the attempt row, not parsed: asking for
		// gzip would only spend CPU inflating what we mostly discard.
		DisableCompression: true,
	}
	return &http.Client{
		Transport:     t,
		Timeout:       cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func tlsConfig(c *tls.Config) *tls.Config {
	if c == nil {
		return &tls.Config{MinVersion: tls.VersionTLS12}
	}
	c = c.Clone()
	c.InsecureSkipVerify = false
	if c.MinVersion == 0 {
		c.MinVersion = tls.VersionTLS12
	}
	return c
}

// Dialer opens the TCP connections of targets that are not HTTP (an AMQP
// server, a tenant's Kafka brokers) under the same policy as the HTTP
// client's. It refuses a host that is an IP literal before dialling it, so
// that the spellings only a libc resolver reads as addresses (127.1,
// 2130706433) fail as refused rather than as unknown names, and dials the
// address they spell when allowed. The check that holds is net's Control,
// on every address actually connected to. TLS, if any, is the caller's,
// over the connection it returns.
type Dialer struct {
	policy Policy
	net    *net.Dialer
}

// NewDialer returns the dialer of cfg's policy, bounded by its
// ConnectTimeout.
func NewDialer(cfg Config) Dialer {
	cfg = cfg.WithDefaults()
	return Dialer{policy: cfg.Policy, net: &net.Dialer{
		Timeout:   cfg.ConnectTimeout,
		KeepAlive: 30 * time.Second,
		Control:   cfg.Policy.control,
	}}
}

// DialContext connects to addr (host:port) over network if the policy
// allows the address it resolves to.
func (d Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("egress: dial %s: %w", addr, err)
	}
	if a, ok := ipLiteral(host); ok {
		if err := d.policy.Check(a); err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		addr = net.JoinHostPort(a.String(), port)
	}
	return d.net.DialContext(ctx, network, addr)
}

// control is the net.Dialer's Control: it runs after resolution, on the
// address about to be connected to, so no DNS answer can get around it.
func (p Policy) control(network, address string, _ syscall.RawConn) error {
	if !strings.HasPrefix(network, "tcp") {
		return fmt.Errorf("egress: network %s: %w", network, ErrRefusedAddress)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: dialled address %q: %w", address, ErrRefusedAddress)
	}
	return p.Check(ap.Addr().Unmap())
}
