package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
)

// report is what a run found; .run/chaos/report.json holds it.
type report struct {
	Seed             uint64                     `json:"seed"`
	Mode             string                     `json:"mode"`
	DurationS        float64                    `json:"duration_s"`
	Accepted         int                        `json:"accepted"`
	Answers          map[string]int             `json:"answers_by_status"`
	Rejected         map[string]map[string]int  `json:"hostile_rejected_by_reason"`
	Duplicates       int                        `json:"duplicates_delivered"`
	Kills            map[string]int             `json:"kills"`
	Locks            int                        `json:"balance_locks"`
	EligibleInvoices int                        `json:"eligible_invoices"`
	DeadLetters      int                        `json:"dead_letters"`
	Checked          map[string]int             `json:"projections_checked"`
	Republished      int                        `json:"outbox_rows_published_twice"`
	Lost             int                        `json:"lost"`
	DuplicateEffects int                        `json:"duplicate_effects"`
	StaleOverwrites  int                        `json:"stale_overwrites"`
	WorstEffectMS    map[string]int64           `json:"worst_ms_to_effect_after"`
	ConsumerStarts   int                        `json:"consumer_starts"`
	Rebalances       map[string]groupRebalances `json:"rebalances_by_group"`
	RebalanceRule    string                     `json:"rebalance_rule"`
	PeakRSSMiB       map[string]float64         `json:"peak_rss_mib"`
	Destinations     destinationFigures         `json:"destinations"`
	Upgrade          *upgradeFigures            `json:"upgrade,omitempty"`
	Violations       []string                   `json:"violations"`
}

// groupRebalances is one consumer group's rebalances, read from
// __consumer_offsets, against what the run's starts and faults allow.
type groupRebalances struct {
	Rebalances  int            `json:"rebalances"`
	Allowed     int            `json:"allowed"`
	Generations int32          `json:"generations"`
	FollowUps   int            `json:"cooperative_follow_ups"`
	Emptied     int            `json:"emptied"`
	ByCause     map[string]int `json:"by_cause"`
	// Stored is every generation as __consumer_offsets has it, for a
	// post-mortem: "n@hh:mm:ss.mmm [member id endings]", "+revoke" when the
	// round took partitions back.
	Stored []string `json:"stored_generations"`
}

func newReport(seed uint64) *report {
	return &report{Seed: seed, Answers: map[string]int{}, Rejected: map[string]map[string]int{}, Kills: map[string]int{}, Checked: map[string]int{},
		WorstEffectMS: map[string]int64{}, Rebalances: map[string]groupRebalances{}, PeakRSSMiB: map[string]float64{}, Violations: []string{}}
}

// fill copies the sender's tallies in.
func (r *report) fill(s *sender) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for st, n := range s.statuses {
		key := fmt.Sprint(st)
		if st == 0 {
			key = "no_answer"
		}
		r.Answers[key] = n
	}
	r.Duplicates = s.statuses[200]
	for kind, byStatus := range s.hostile {
		r.Rejected[kind] = map[string]int{}
		for st, n := range byStatus {
			r.Rejected[kind][fmt.Sprint(st)] = n
		}
	}
}

func (r *report) write(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nSluice chaos, %s mode, seed %d, %.0f s\n", r.Mode, r.Seed, r.DurationS)
	fmt.Fprintf(w, "  accepted %d event keys (%d eligible invoices, %d poison dead-lettered); answers %v\n", r.Accepted, r.EligibleInvoices, r.DeadLetters, r.Answers)
	fmt.Fprintf(w, "  objects checked %v\n", r.Checked)
	fmt.Fprintf(w, "  duplicates delivered %d; outbox rows published twice %d\n", r.Duplicates, r.Republished)
	for _, k := range slices.Sorted(maps.Keys(r.Rejected)) {
		fmt.Fprintf(w, "  hostile %-20s %v\n", k, r.Rejected[k])
	}
	fmt.Fprintf(w, "  kills %v\n", r.Kills)
	for _, k := range slices.Sorted(maps.Keys(r.WorstEffectMS)) {
		fmt.Fprintf(w, "  worst time to effect after %-20s %6d ms\n", k, r.WorstEffectMS[k])
	}
	fmt.Fprintf(w, "  rebalances, %s\n", r.RebalanceRule)
	fmt.Fprintf(w, "  consumer kills %d, consumer starts %d; rebalances by group:\n", r.Kills["consume"], r.ConsumerStarts)
	for _, g := range slices.Sorted(maps.Keys(r.Rebalances)) {
		b := r.Rebalances[g]
		fmt.Fprintf(w, "    %-22s %d of %d allowed (%d generations, %d follow-up rounds, %d emptied) %v\n", g, b.Rebalances, b.Allowed, b.Generations, b.FollowUps, b.Emptied, nonZero(b.ByCause))
	}
	for _, k := range slices.Sorted(maps.Keys(r.PeakRSSMiB)) {
		fmt.Fprintf(w, "  peak RSS %-10s %4.0f MiB\n", k, r.PeakRSSMiB[k])
	}
	d := r.Destinations
	fmt.Fprintf(w, "  destinations: %d endpoints, %d receipts due, %d requests (%d first attempts refused 503, %d left in flight, %d redelivered after a 2xx)\n",
		d.Endpoints, d.Expected, d.Requests, d.Refused503, d.Abandoned, d.Redelivered)
	fmt.Fprintf(w, "  destinations: lost %d, stray %d, out of order %d, unstable webhook-ids %d, unsigned %d\n",
		d.Lost, d.Stray, d.OutOfOrder, d.UnstableWebhookIDs, d.Unsigned)
	fmt.Fprintf(w, "  lost %d, duplicate effects %d, stale overwrites %d\n", r.Lost, r.DuplicateEffects, r.StaleOverwrites)
	r.Upgrade.print(w)
	if len(r.Violations) == 0 {
		fmt.Fprintf(w, "OK: every invariant held (report .run/chaos/report.json)\n")
		return
	}
	fmt.Fprintf(w, "FAILED: %d violations (replay with CHAOS_SEED=%d):\n", len(r.Violations), r.Seed)
	for _, v := range r.Violations {
		fmt.Fprintf(w, "  - %s\n", v)
	}
}

func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

func (u *upgradeFigures) print(w io.Writer) {
	if u == nil {
		return
	}
	m := u.Migration
	fmt.Fprintf(w, "  upgrade from the previous release (%s) to the working tree, schema %d -> %d, %.0f s:\n", u.Previous, u.SchemaFrom, u.SchemaTo, u.DurationS)
	fmt.Fprintf(w, "    migrated under load: applied %v in %d ms, %d attempts gave up on a lock (%d ms stalled)\n", m.Applied, m.TookMS, m.Retries, m.StalledMS)
	for _, s := range u.Steps {
		fmt.Fprintf(w, "    %s\n", s)
	}
	fmt.Fprintf(w, "    rollback to the previous release on the new schema: %s\n", u.Rollback)
	fmt.Fprintf(w, "    events sent %d; accepted during the upgrade %d; refused and retried by the sender %d (refusals by status %v); longest refusal %d ms\n",
		u.Sent, u.AcceptedDuring, u.Retried, u.Refused, u.LongestMS)
	fmt.Fprintf(w, "    continuity: the slot looked at %d times, the groups' offsets %d times, never going back\n", u.SlotChecks, u.OffsetChecks)
	d := u.Drill
	fmt.Fprintf(w, "  lock drill: %.0f events/s (%d sent, %d accepted, refused %v); a migration taking ACCESS EXCLUSIVE on inbox behind a long report:\n",
		d.Rate, d.Sent, d.Accepted, d.Refused)
	fmt.Fprintf(w, "    %d attempts, stalled %d ms in all (lock timeout %d ms each), applied after %d ms\n", d.Attempts, d.StalledMS, d.LockTimeoutMS, d.MigrationMS)
	fmt.Fprintf(w, "    ingest answers before: p50 %.0f ms, p99 %.0f ms, max %.0f ms; during the migration: p99 %.0f ms, longest %.0f ms (lock timeout + max before = %.0f ms, %d answers over it; limit %.0f ms)\n",
		d.UsualP50MS, d.UsualP99MS, d.UsualMaxMS, d.DuringP99MS, d.LongestMS, d.BoundMS, d.OverBound, d.LimitMS)
}
