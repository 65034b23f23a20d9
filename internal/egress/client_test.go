package egress

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync/atomic"
	"testing"
	"time"
)

// loopback is the Allow list of the tests that must reach their own
// httptest servers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// endpoint is a live server that counts the requests it receives.
type endpoint struct {
	*httptest.Server
	hits atomic.Int64
}

func newEndpoint(t *testing.T, h http.HandlerFunc) *endpoint {
	t.Helper()
	e := &endpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(e.Close)
	return e
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

func (e *endpoint) port(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(e.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

// post sends a delivery the way the deliverer will, under a context
// bounding the test.
func post(t *testing.T, c *http.Client, target string) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err == nil {
		t.Cleanup(func() { _ = resp.Body.Close() })
	}
	return resp, err
}

func TestClientRefusesInternalAddressesAtDialTime(t *testing.T) {
	t.Parallel()
	srv := newEndpoint(t, ok)
	port := srv.port(t)
	// A short ConnectTimeout, so that a refusal that failed to happen
	// shows as a connect error rather than a hang; refusals themselves
	// happen before connect(2) and are immediate.
	client := NewClient(Config{ConnectTimeout: time.Second})
	for _, host := range []string{
		"127.0.0.1:" + port,
		"localhost:" + port, // a name resolving to 127.0.0.1: only the dial-time check sees it
		"[::1]:" + port,
		"[::ffff:127.0.0.1]:" + port,
		"2130706433:" + port,
		"0x7f.0.0.1:" + port,
		"0177.0.0.1:" + port,
		"127.1:" + port,
		"0.0.0.0:" + port, // connect(2) to 0.0.0.0 reaches the local host
		"10.0.0.1",
		"100.64.0.1",
		"169.254.169.254",
		"[fd00::1]",
	} {
		t.Run(host, func(t *testing.T) {
			t.Parallel()
			resp, err := post(t, client, "http://"+host+"/hook")
			if err == nil {
				t.Fatalf("POST %s answered %s, want a refusal", host, resp.Status)
			}
			if !errors.Is(err, ErrRefusedAddress) {
				t.Fatalf("POST %s = %v, want an error wrapping ErrRefusedAddress", host, err)
			}
			if got := Classify(err); got != ClassRefusedAddress {
				t.Errorf("Classify(%v) = %q, want %q", err, got, ClassRefusedAddress)
			}
		})
	}
	t.Cleanup(func() {
		if n := srv.hits.Load(); n != 0 {
			t.Errorf("the server on 127.0.0.1 received %d requests, want none", n)
		}
	})
}

// The literal checks in front of the dialer aside, the Control hook alone
// refuses what a name resolves to.
func TestDialerControlRefusesTheResolvedAddress(t *testing.T) {
	t.Parallel()
	srv := newEndpoint(t, ok)
	d := &net.Dialer{Timeout: time.Second, Control: Policy{}.control}
	for _, addr := range []string{srv.Listener.Addr().String(), "localhost:" + srv.port(t)} {
		conn, err := d.DialContext(context.Background(), "tcp", addr)
		if err == nil {
			_ = conn.Close()
			t.Fatalf("dial %s connected, want a refusal", addr)
		}
		if !errors.Is(err, ErrRefusedAddress) {
			t.Errorf("dial %s = %v, want ErrRefusedAddress", addr, err)
		}
	}
}

func TestClientReachesAllowedLoopback(t *testing.T) {
	t.Parallel()
	srv := newEndpoint(t, ok)
	client := NewClient(Config{Policy: Policy{Allow: loopback}, ConnectTimeout: time.Second})
	for _, host := range []string{"127.0.0.1", "localhost", "127.1", "2130706433"} {
		t.Run(host, func(t *testing.T) {
			resp, err := post(t, client, "http://"+net.JoinHostPort(host, srv.port(t))+"/hook")
			if err != nil {
				t.Fatalf("POST to %s with loopback allowed: %v", host, err)
			}
			if resp.StatusCode != http.StatusOK {
				t.Errorf("POST to %s answered %s, want 200", host, resp.Status)
			}
		})
	}
	if n := srv.hits.Load(); n != 4 {
		t.Errorf("the server received %d requests, want 4", n)
	}
}

func TestClientReachesAllowedIPv6Loopback(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback here: %v", err)
	}
	var hits atomic.Int64
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	})}}
	srv.Start()
	t.Cleanup(srv.Close)
	resp, err := post(t, NewClient(Config{Policy: Policy{Allow: loopback}}), srv.URL)
	if err != nil {
		t.Fatalf("POST %s with ::1 allowed: %v", srv.URL, err)
	}
	if resp.StatusCode != http.StatusOK || hits.Load() != 1 {
		t.Errorf("POST %s answered %s after %d requests, want 200 after 1", srv.URL, resp.Status, hits.Load())
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	inner := newEndpoint(t, ok)
	outer := newEndpoint(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inner.URL+"/admin", http.StatusFound)
	})
	client := NewClient(Config{Policy: Policy{Allow: loopback}})
	resp, err := post(t, client, outer.URL+"/hook")
	if err != nil {
		t.Fatalf("POST %s: %v", outer.URL, err)
	}
	if resp.StatusCode != http.StatusFound {
		t.Errorf("POST %s answered %s, want the 302 itself", outer.URL, resp.Status)
	}
	if n := inner.hits.Load(); n != 0 {
		t.Errorf("the redirect's target received %d requests, want none", n)
	}
}

// Not parallel: it sets the environment.
func TestClientIgnoresProxyEnvironment(t *testing.T) {
	proxy := newEndpoint(t, ok)
	for _, v := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"} {
		t.Setenv(v, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	srv := newEndpoint(t, ok)
	client := NewClient(Config{Policy: Policy{Allow: loopback}, ConnectTimeout: time.Second})

	// A loopback endpoint goes direct and is reached.
	if _, err := post(t, client, srv.URL); err != nil {
		t.Fatalf("POST %s: %v", srv.URL, err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("the endpoint received %d requests, want 1", n)
	}
	// Go's environment proxy skips loopback on its own, so the case that
	// tells is a name: through a proxy it would be answered; direct, it
	// does not resolve (.invalid never does).
	resp, err := post(t, client, "http://sluice-egress-test.invalid/hook")
	if err == nil {
		t.Errorf("POST to an unresolvable name answered %s: it went through the proxy", resp.Status)
	} else if got := Classify(err); got != ClassDNS {
		t.Errorf("POST to an unresolvable name = %v, class %q, want %q: the lookup is ours, not a proxy's", err, got, ClassDNS)
	}
	if n := proxy.hits.Load(); n != 0 {
		t.Errorf("the proxy received %d requests, want none", n)
	}
}

func TestClientVerifiesTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(ok))
	srv.EnableHTTP2 = true
	// The refused handshakes are the point: keep them out of the log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	cases := []struct {
		name string
		tls  *tls.Config
		ok   bool
	}{
		{"system roots do not know a self-signed certificate", nil, false},
		{"skipping verification is not honoured", &tls.Config{InsecureSkipVerify: true}, false},
		{"the server's certificate in RootCAs is verified", &tls.Config{RootCAs: pool}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			client := NewClient(Config{Policy: Policy{Allow: loopback}, TLS: c.tls})
			resp, err := post(t, client, srv.URL)
			if !c.ok {
				if got := Classify(err); got != ClassTLS {
					t.Errorf("POST %s = %v, class %q, want %q", srv.URL, err, got, ClassTLS)
				}
				return
			}
			if err != nil {
				t.Fatalf("POST %s: %v", srv.URL, err)
			}
			if resp.ProtoMajor != 2 {
				t.Errorf("POST %s spoke %s, want HTTP/2", srv.URL, resp.Proto)
			}
		})
	}
}

func TestNewClientNeverUsesAProxyOrRedirects(t *testing.T) {
	t.Parallel()
	c := NewClient(Config{})
	tr, isTransport := c.Transport.(*http.Transport)
	if !isTransport {
		t.Fatalf("Transport is %T, want *http.Transport", c.Transport)
	}
	if tr.Proxy != nil {
		t.Error("Transport.Proxy is set, want nil")
	}
	if tr.TLSClientConfig == nil || tr.TLSClientConfig.InsecureSkipVerify {
		t.Error("TLS is not verified")
	}
	if c.Timeout != defaultTimeout || c.CheckRedirect == nil {
		t.Errorf("Timeout %s, CheckRedirect set %v: want %s and set", c.Timeout, c.CheckRedirect != nil, defaultTimeout)
	}
}
