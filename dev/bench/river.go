package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// The river step (issue 48): a floor of another kind than the ladder's. The
// same service built on River (dev/bench/river: the webhook verified and
// stored with its job in one group-committed transaction, a worker granting
// under the business key and writing the outbox row) runs beside Sluice in
// alternating rounds of the fresh step's shape, and the step reads Sluice's
// accepted rate and CPU per event against it. Target: Sluice at least 4x
// River's rate at at most 0.25x its CPU per event (Sluice + Postgres + Kafka
// against River's process + Postgres), medians of the pairs.

// riverDesign is the River comparator, a process of its own.
type riverDesign struct{ bin string }

func (riverDesign) name() string    { return "river" }
func (riverDesign) usesKafka() bool { return false }

// prepare makes the comparator's tables and River's (`river migrate`) and
// seeds one source and its customers' workspaces, as Sluice's round does.
func (d riverDesign) prepare(ctx context.Context, w *freshWorld) error {
	s := benchSource{tenantID: uuid.NewString(), sourceID: uuid.NewString(), account: "acct_river", secret: "whsec_river_" + w.b.run}
	for c := range freshCustomers {
		s.customers = append(s.customers, fmt.Sprintf("cus_river_%d", c))
	}
	seed, err := json.Marshal([]map[string]any{{"id": s.sourceID, "tenant": s.tenantID, "account": s.account, "secret": s.secret, "customers": s.customers}})
	if err != nil {
		return err
	}
	path := filepath.Join(w.b.outDir, "river_sources.json")
	if err := os.WriteFile(path, seed, 0o600); err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, d.bin, "migrate", "-database-url", w.b.dbURL, "-sources", path).CombinedOutput(); err != nil {
		return fmt.Errorf("river migrate: %w: %s", err, out)
	}
	w.source = s
	return nil
}

// start runs `river serve` with its defaults, or BENCH_RIVER_FLAGS's
// (e.g. "-workers 50 -pool 20": the comparator tuned on this machine).
func (d riverDesign) start(_ context.Context, w *freshWorld) (*proc, error) {
	args := append([]string{"serve", "-database-url", w.b.dbURL, "-addr", w.b.stageAddr}, strings.Fields(os.Getenv("BENCH_RIVER_FLAGS"))...)
	return start("river", d.bin, args, nil, w.b.stageAddr, "", "/readyz", w.b.outDir)
}

// drain waits until River finished (completed or cancelled) every job the
// comparator committed.
func (riverDesign) drain(ctx context.Context, w *freshWorld) error {
	return waitEvery(ctx, 10*time.Minute, 250*time.Millisecond, "the River design's jobs to finish", func() (bool, error) {
		resp, err := http.Get("http://" + w.b.stageAddr + "/stats")
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		var st struct{ Inserted, Finished int64 }
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return false, err
		}
		return st.Finished >= st.Inserted, nil
	})
}

// riverRounds is BENCH_RIVER_ROUNDS, else 1 pair quick and 3 full.
func (b *bench) riverRounds() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_RIVER_ROUNDS")); err == nil && n > 0 {
		return n
	}
	return pick(b.quick, 1, 3)
}

// versusRiver runs pairs of fresh rounds, Sluice's and River's, in ABBA
// order, so drift over the step falls on both.
func (b *bench) versusRiver(ctx context.Context) error {
	if _, err := os.Stat(b.riverBin); err != nil {
		return fmt.Errorf("%s missing: dev/bench.sh builds it (make bench)", b.riverBin)
	}
	var sluices, rivers []freshRun
	for i := range b.riverRounds() {
		for _, isRiver := range abba(i) {
			var d design = sluiceDesign{}
			if isRiver {
				d = riverDesign{bin: b.riverBin}
			}
			r, err := b.freshRound(ctx, d, fmt.Sprintf("r%s%d", d.name()[:1], i))
			if err != nil {
				return fmt.Errorf("pair %d: %w", i+1, err)
			}
			b.freshRuns = append(b.freshRuns, r)
			if isRiver {
				rivers = append(rivers, r)
			} else {
				sluices = append(sluices, r)
			}
		}
	}
	var rateRatios, cpuRatios []float64
	for i := range sluices {
		rateRatios = append(rateRatios, sluices[i].rate/rivers[i].rate)
		cpuRatios = append(cpuRatios, sluices[i].total()/rivers[i].total())
	}
	for design, runs := range map[string][]freshRun{"river": rivers, "river_sluice": sluices} {
		b.results[design+"_events_per_s"] = median(field(runs, func(r freshRun) float64 { return r.rate }))
		b.results[design+"_own_cpu_us_per_event"] = median(field(runs, func(r freshRun) float64 { return r.own }))
		b.results[design+"_postgres_cpu_us_per_event"] = median(field(runs, func(r freshRun) float64 { return r.postgres }))
		b.results[design+"_total_cpu_us_per_event"] = median(field(runs, freshRun.total))
		b.results[design+"_generator_cpu_us_per_event"] = median(field(runs, func(r freshRun) float64 { return r.g }))
	}
	b.results["river_sluice_kafka_cpu_us_per_event"] = median(field(sluices, func(r freshRun) float64 { return r.kafka - r.kafkaAside }))
	b.results["river_rounds"] = float64(len(sluices))
	b.results["river_rate_ratio"] = median(rateRatios)
	b.results["river_rate_ratio_min"] = slices.Min(rateRatios)
	b.results["river_cpu_ratio"] = median(cpuRatios)
	b.results["river_cpu_ratio_max"] = slices.Max(cpuRatios)
	b.note("River design beside Sluice, %d alternating pairs on fresh databases: Sluice / River accepted rate %.2f (lowest pair %.2f; target >= 4, none under 3), CPU per event %.2f (highest pair %.2f; target <= 0.25)",
		len(sluices), median(rateRatios), slices.Min(rateRatios), median(cpuRatios), slices.Max(cpuRatios))
	b.machineArithmetic()
	return nil
}

// machineArithmetic says what the machine lets the rate ratio be: the
// generator signs every request on the same cores, so when both designs
// saturate them the ratio of rates is that of each event's whole cost,
// the generator's included, which narrows it below the ratio of the
// designs' own costs.
func (b *bench) machineArithmetic() {
	cores := float64(runtime.NumCPU())
	s, r := b.results["river_sluice_total_cpu_us_per_event"], b.results["river_total_cpu_us_per_event"]
	gs, gr := b.results["river_sluice_generator_cpu_us_per_event"], b.results["river_generator_cpu_us_per_event"]
	rs, rr := b.results["river_sluice_events_per_s"], b.results["river_events_per_s"]
	b.note("the machine: an event costs %.0f us of CPU in all beside Sluice (its %.0f and the generator's %.0f), %.0f beside River (%.0f and %.0f): at the rates measured, %.2f and %.2f of the %.0f cores. Were both saturating them, the rates' ratio would be %.2f (%.0f over %.0f); 4x River's rate with this generator needs Sluice's CPU per event at most (River's + generator's) / 4 - generator's = %.0f us",
		s+gs, s, gs, r+gr, r, gr, rs*(s+gs)/1e6, rr*(r+gr)/1e6, cores, (r+gr)/(s+gs), r+gr, s+gs, (r+gr)/4-gs)
}
