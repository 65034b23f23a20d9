package main

import (
	"log/slog"
	"strings"
	"testing"
)

// The endpoint check names each way a deliverer can be wrong: a late event
// taken before an earlier one of its resource, an event under two
// webhook-ids, two events under one, an event never taken, one the
// endpoint does not take, a request its key did not sign.
func TestCheckEndpointNamesEachBrokenInvariant(t *testing.T) {
	ep := &endpoint{name: "all-0", tenant: "t", filters: []string{"stripe.invoice.*"}, ordered: true}
	events := []kafkaEvent{
		{topic: "chaos.credits", key: "k1", tenant: "t", eventType: "stripe.invoice.paid", identity: "s a"},
		{topic: "chaos.credits", key: "k1", tenant: "t", eventType: "stripe.invoice.paid", identity: "s b"},
		{topic: "chaos.credits", key: "k1", tenant: "t", eventType: "stripe.invoice.paid", identity: "s a"}, // published twice
		{topic: "chaos.credits", key: "k2", tenant: "t", eventType: "stripe.invoice.paid", identity: "s c"},
		{topic: "chaos.credits", key: "k2", tenant: "t", eventType: "stripe.invoice.paid", identity: "s d"},
		{topic: "chaos.credits", key: "k3", tenant: "other", eventType: "stripe.invoice.paid", identity: "s e"},
		{topic: "chaos.credits", key: "k4", tenant: "t", eventType: "stripe.charge.refunded", identity: "s f"},
	}
	good := []receipt{
		{webhookID: "w-a", identity: "s a", eventType: "stripe.invoice.paid", seq: 1, ok: false, signed: true},
		{webhookID: "w-c", identity: "s c", eventType: "stripe.invoice.paid", seq: 2, ok: true, signed: true},
		{webhookID: "w-a", identity: "s a", eventType: "stripe.invoice.paid", seq: 3, ok: true, signed: true},
		{webhookID: "w-b", identity: "s b", eventType: "stripe.invoice.paid", seq: 4, ok: true, signed: true},
		{webhookID: "w-d", identity: "s d", eventType: "stripe.invoice.paid", seq: 5, ok: true, signed: true},
		{webhookID: "w-a", identity: "s a", eventType: "stripe.invoice.paid", seq: 6, ok: true, signed: true},
	}
	cases := map[string]struct {
		got  func([]receipt) []receipt
		want string
	}{
		"good":           {func(r []receipt) []receipt { return r }, ""},
		"out of order":   {func(r []receipt) []receipt { r[2].seq, r[3].seq = 4, 3; return r }, "took s b before s a, which Kafka has first"},
		"two ids":        {func(r []receipt) []receipt { r[5].webhookID = "w-a2"; return r }, "under 2 webhook-ids"},
		"one id for two": {func(r []receipt) []receipt { r[4].webhookID = "w-c"; return r }, "webhook-id w-c for 2 events"},
		"lost":           {func(r []receipt) []receipt { return r[:4] }, "never took s d"},
		"other tenant": {func(r []receipt) []receipt {
			return append(r, receipt{webhookID: "w-e", identity: "s e", eventType: "stripe.invoice.paid", seq: 7, ok: true, signed: true})
		}, "got s e of type stripe.invoice.paid, which it does not take"},
		"not its filter": {func(r []receipt) []receipt {
			return append(r, receipt{webhookID: "w-f", identity: "s f", eventType: "stripe.charge.refunded", seq: 7, ok: true, signed: true})
		}, "got s f of type stripe.charge.refunded"},
		"unsigned": {func(r []receipt) []receipt { r[1].signed = false; return r }, "without a signature of its key"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := &chaos{log: slog.New(slog.DiscardHandler), report: newReport(0)}
			r := &receiver{endpoints: map[string]*endpoint{ep.name: ep}}
			got := tc.got(append([]receipt{}, good...))
			c.checkEndpoint(ep, got, r.expect(events), &c.report.Destinations)
			v := strings.Join(c.report.Violations, "\n")
			if tc.want == "" {
				if v != "" {
					t.Fatalf("violations for a good run:\n%s", v)
				}
				return
			}
			if !strings.Contains(v, tc.want) {
				t.Fatalf("want a violation with %q, got:\n%s", tc.want, v)
			}
		})
	}
}
