// Command demo is the outside world of make run's demo, on loopback: a
// fake of Stripe's API (stripetest's) holding a paid invoice of the demo's
// customer whose webhook never came, for the demo source's reconciliation
// (and any run the console starts), and a tenant's receiver for the demo
// endpoint, which refuses the first request it gets (503, so one delivery
// shows a failed attempt and its retry) and accepts every other (204). It
// listens where it listened the last time (--state keeps the addresses),
// so the demo's source and endpoint point at it across runs, prints
// "stripe <url>" and "receiver <url>", then one line per request the
// receiver answers, and serves until it is stopped. For the demo only:
// Stripe is a third party.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
)

// addresses are where the fakes listen, kept in --state.
type addresses struct {
	Stripe   string `json:"stripe"`
	Receiver string `json:"receiver"`
}

func main() {
	state := flag.String("state", "", "File keeping the addresses between runs (make run: .run/demo/world.json).")
	customer := flag.String("customer", "cus_demo", "The Stripe customer whose paid invoice the webhooks missed.")
	flag.Parse()
	if err := run(*state, *customer); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(state, customer string) error {
	var was addresses
	if b, err := os.ReadFile(state); err == nil {
		_ = json.Unmarshal(b, &was) // a damaged file: new addresses
	}
	stripeLn, err := listen(was.Stripe)
	if err != nil {
		return err
	}
	receiverLn, err := listen(was.Receiver)
	if err != nil {
		return err
	}
	now := addresses{Stripe: stripeLn.Addr().String(), Receiver: receiverLn.Addr().String()}
	if err := save(state, now); err != nil {
		return err
	}
	api := stripetest.StartOn(stripeLn)
	defer api.Close()
	missed := fmt.Sprint(time.Now().Unix())
	api.Record(stripetest.Event{ID: "evt_demo_missed_" + missed, Type: "invoice.paid", Created: time.Now().Add(-10 * time.Minute), APIVersion: "2024-06-20",
		Object: map[string]any{"id": "in_demo_missed_" + missed, "object": "invoice", "customer": customer, "amount_paid": 3000, "currency": "usd", "status": "paid"}})
	receiver := &http.Server{Handler: &firstRefused{}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = receiver.Serve(receiverLn) }()
	defer receiver.Close()
	fmt.Printf("stripe http://%s\nreceiver http://%s/hooks\n", now.Stripe, now.Receiver)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
	return nil
}

// listen listens on loopback at addr, where the fake listened before, or
// on a free port when that one is taken (the demo then points the source
// or the endpoint at the new one).
func listen(addr string) (net.Listener, error) {
	if addr != "" {
		if ln, err := net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}

func save(path string, a addresses) error {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path+".tmp", append(b, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// firstRefused is the demo endpoint's receiver: its first request is
// answered 503, every other 204, each printed with its webhook-id and
// event type.
type firstRefused struct{ served atomic.Int64 }

func (f *firstRefused) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status := http.StatusNoContent
	if f.served.Add(1) == 1 {
		status = http.StatusServiceUnavailable
	}
	if r.Method != http.MethodPost {
		status = http.StatusMethodNotAllowed
	}
	w.WriteHeader(status)
	fmt.Printf("receiver answered %d to %s %s\n", status, r.Header.Get("webhook-id"), r.Header.Get("ce-type"))
}
