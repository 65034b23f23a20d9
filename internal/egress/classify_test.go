package egress

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"
)

// Errors shaped as net/http returns them: a *url.Error around a
// *net.OpError around the cause.
func TestClassifyNamesEachKindOfFailure(t *testing.T) {
	t.Parallel()
	wrap := func(op string, err error) error {
		return &url.Error{Op: "Post", URL: "https://example.com/", Err: &net.OpError{Op: op, Net: "tcp", Err: err}}
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"refused address", wrap("dial", &RefusedError{Reason: "loopback"}), ClassRefusedAddress},
		{"refused address wrapped again", fmt.Errorf("deliver: %w", wrap("dial", ErrRefusedAddress)), ClassRefusedAddress},
		{"no such host", wrap("dial", &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}), ClassDNS},
		{"DNS timeout", wrap("dial", &net.DNSError{Err: "i/o timeout", Name: "x", IsTimeout: true}), ClassDNS},
		{"connection refused", wrap("dial", os.NewSyscallError("connect", syscall.ECONNREFUSED)), ClassConnect},
		{"no route", wrap("dial", os.NewSyscallError("connect", syscall.EHOSTUNREACH)), ClassConnect},
		{"connect timeout", wrap("dial", os.ErrDeadlineExceeded), ClassConnect},
		{"unknown authority", &url.Error{Op: "Post", Err: x509.UnknownAuthorityError{}}, ClassTLS},
		{"wrong host", &url.Error{Op: "Post", Err: x509.HostnameError{Host: "example.com"}}, ClassTLS},
		{"read timeout", wrap("read", os.ErrDeadlineExceeded), ClassTimeout},
		{"client timeout", &url.Error{Op: "Post", Err: context.DeadlineExceeded}, ClassTimeout},
		{"reset", wrap("read", os.NewSyscallError("read", syscall.ECONNRESET)), ClassReset},
		{"broken pipe", wrap("write", os.NewSyscallError("write", syscall.EPIPE)), ClassReset},
		{"closed mid-answer", &url.Error{Op: "Post", Err: io.ErrUnexpectedEOF}, ClassReset},
		{"closed before answering", &url.Error{Op: "Post", Err: io.EOF}, ClassReset},
		{"canceled", &url.Error{Op: "Post", Err: context.Canceled}, ClassCanceled},
		{"canceled while dialling", wrap("dial", context.Canceled), ClassCanceled},
		{"anything else", errors.New("net/http: something new"), ClassOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(c.err); got != c.want {
				t.Errorf("Classify(%v) = %q, want %q", c.err, got, c.want)
			}
		})
	}
}

// The same classes from real failures against real sockets.
func TestClassifyRealFailures(t *testing.T) {
	t.Parallel()
	client := NewClient(Config{Policy: Policy{Allow: loopback}, ConnectTimeout: time.Second, Timeout: 300 * time.Millisecond})

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	_ = closed.Close()

	release := make(chan struct{})
	hanging := newEndpoint(t, func(http.ResponseWriter, *http.Request) { <-release })
	// Registered after the server's Close, so run before it: Close waits
	// for the handler.
	t.Cleanup(func() { close(release) })

	dropping := newEndpoint(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})

	canceled, cancel := context.WithCancel(context.Background())
	cancel()

	cases := []struct {
		name, url string
		ctx       context.Context
		want      string
	}{
		{"nothing listens", closedURL, context.Background(), ClassConnect},
		{"the endpoint never answers", hanging.URL, context.Background(), ClassTimeout},
		{"the endpoint drops the connection", dropping.URL, context.Background(), ClassReset},
		{"our context is canceled", hanging.URL, canceled, ClassCanceled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(c.ctx, http.MethodPost, c.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err == nil {
				_ = resp.Body.Close()
				t.Fatalf("POST %s answered %s, want a failure", c.url, resp.Status)
			}
			if got := Classify(err); got != c.want {
				t.Errorf("Classify(%v) = %q, want %q", err, got, c.want)
			}
		})
	}
}
