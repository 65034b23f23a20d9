// Command fakestripe is make run's Stripe API: stripetest's fake, on a
// local port, holding one paid invoice of the demo's customer whose webhook
// never came, so the demo's reconciliation run (and any the console starts)
// has something to recover. It prints "url <base URL>" and serves until it
// is stopped. For the demo only: Stripe is a third party.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
)

func main() {
	customer := flag.String("customer", "", "The Stripe customer whose paid invoice the webhooks missed.")
	id := flag.String("suffix", fmt.Sprint(time.Now().Unix()), "Names the missed event and invoice (evt_demo_missed_SUFFIX).")
	flag.Parse()
	if *customer == "" {
		fmt.Fprintln(os.Stderr, "fakestripe: --customer is required")
		os.Exit(2)
	}
	api := stripetest.Start()
	defer api.Close()
	api.Record(stripetest.Event{ID: "evt_demo_missed_" + *id, Type: "invoice.paid", Created: time.Now().Add(-10 * time.Minute), APIVersion: "2024-06-20",
		Object: map[string]any{"id": "in_demo_missed_" + *id, "object": "invoice", "customer": *customer, "amount_paid": 3000, "currency": "usd", "status": "paid"}})
	fmt.Printf("url %s\n", api.URL)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	<-stop
}
