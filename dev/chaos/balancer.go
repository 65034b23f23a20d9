package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"
)

// balancer is the load balancer in front of the ingest instances of the
// upgrade run, as a deployment has one: it sends each request to the next
// instance whose /readyz answered at its last check (every 200 ms in the
// run), to
// another one when an instance refuses the connection (nothing was sent,
// so even a POST may go elsewhere), and answers 503 with Retry-After when
// none takes it. A request whose connection breaks after it was sent is
// answered 502: the balancer cannot know whether it was accepted, and the
// provider sends it again.
type balancer struct {
	srv      *http.Server
	url      string
	backends []*backend
	next     atomic.Uint64
	client   *http.Client
	stop     chan struct{}
}

type backend struct {
	url   string
	ready atomic.Bool
}

// newBalancer balances over urls, asking each instance's /readyz every
// checkEvery; an instance counts as ready until its first check.
func newBalancer(urls []string, checkEvery time.Duration) (*balancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second,
		DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext}
	b := &balancer{url: "http://" + ln.Addr().String(), client: &http.Client{Transport: tr, Timeout: 30 * time.Second}, stop: make(chan struct{})}
	for _, u := range urls {
		be := &backend{url: u}
		be.ready.Store(true)
		b.backends = append(b.backends, be)
	}
	b.srv = &http.Server{Handler: b, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = b.srv.Serve(ln) }()
	go b.check(checkEvery)
	return b, nil
}

func (b *balancer) close() {
	close(b.stop)
	_ = b.srv.Close()
}

// check asks every instance's /readyz every period.
func (b *balancer) check(period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
		}
		for _, be := range b.backends {
			be.ready.Store(httpOK(be.url + "/readyz"))
		}
	}
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "balancer: reading the request", http.StatusBadRequest)
		return
	}
	n := b.next.Add(1)
	for i := range b.backends {
		be := b.backends[(int(n)+i)%len(b.backends)]
		if !be.ready.Load() {
			continue
		}
		resp, err := b.forward(r.Context(), be, r, body)
		if isRefused(err) {
			be.ready.Store(false) // until its next check
			continue
		}
		if err != nil {
			http.Error(w, "balancer: the instance did not answer", http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "balancer: no ingest instance is ready", http.StatusServiceUnavailable)
}

func (b *balancer) forward(ctx context.Context, be *backend, r *http.Request, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, r.Method, be.url+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	return b.client.Do(req)
}

// isRefused: the connection was never made, so the instance saw nothing.
func isRefused(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || (errors.As(err, &op) && op.Op == "dial")
}
