package main

import (
	"testing"
	"time"
)

// The check's copy of sluice_supersedes must order versions as the
// migration documents: a final state outranks any non-final one, the
// earlier of two finals stands, otherwise the newer (time, then id) wins.
func TestSupersedesKeepsFinalStatesAndNewestVersions(t *testing.T) {
	t.Parallel()
	at := time.Unix(1_700_000_000, 0)
	v := func(id string, final bool, s int) version {
		return version{eventID: id, final: final, at: at.Add(time.Duration(s) * time.Second)}
	}
	for _, tc := range []struct {
		name         string
		stored, next version
		want         bool
	}{
		{"newer replaces", v("a", false, 0), v("b", false, 1), true},
		{"older does not", v("b", false, 1), v("a", false, 0), false},
		{"same time, greater id", v("a", false, 0), v("b", false, 0), true},
		{"equal keeps stored", v("a", false, 0), v("a", false, 0), false},
		{"late non-final never undoes a final", v("a", true, 0), v("b", false, 5), false},
		{"final beats a newer non-final", v("a", false, 5), v("b", true, 0), true},
		{"the earlier final stands", v("a", true, 0), v("b", true, 1), false},
		{"an earlier final replaces a later one", v("b", true, 1), v("a", true, 0), true},
	} {
		if got := supersedes(tc.stored, tc.next); got != tc.want {
			t.Errorf("%s: supersedes = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// One seed, one load: the order, ids and hostile requests replay.
func TestPlanReplaysFromItsSeed(t *testing.T) {
	t.Parallel()
	var tenants []*tenant
	for i := range 2 {
		src := func(kind string) *source {
			return &source{id: kind + string(rune('0'+i)), kind: kind, secret: "whsec_x"}
		}
		tenants = append(tenants, &tenant{id: "t", stripe: src("stripe"), github: src("github"), standard: src("standard"), mac: src("hmac"), customers: []string{"c0", "c1"}})
	}
	sz := sizes{invoices: 10, subscriptions: 3, installations: 3, verifications: 3, feedback: 3, hmac: 2, poison: 1}
	a, b := newPlan(42, tenants, sz, "http://x"), newPlan(42, tenants, sz, "http://x")
	if len(a.deliveries) != len(b.deliveries) || len(a.deliveries) == 0 {
		t.Fatalf("%d and %d deliveries", len(a.deliveries), len(b.deliveries))
	}
	hostile := 0
	for i := range a.deliveries {
		if a.deliveries[i].eventID != b.deliveries[i].eventID || a.deliveries[i].hostile != b.deliveries[i].hostile {
			t.Fatalf("delivery %d: %s/%s vs %s/%s", i, a.deliveries[i].eventID, a.deliveries[i].hostile, b.deliveries[i].eventID, b.deliveries[i].hostile)
		}
		if a.deliveries[i].hostile != "" {
			hostile++
		}
	}
	if hostile != 7*len(tenants) {
		t.Errorf("%d hostile requests, want 7 per tenant", hostile)
	}
}
