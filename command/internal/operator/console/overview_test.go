package console_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// kafkaAdmin is a Kafka admin client for a test.
func kafkaAdmin(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(testenv.Require(t).Brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// The overview charts the last hour as the process sampled it: ingest's
// answers by outcome between samples, the slot's retained WAL (a gap
// before the slot existed), each group named in the legend; a
// tenant-scoped token's overview shows none of it.
func TestOverviewChartsTheProcessSamples(t *testing.T) {
	t.Parallel()
	topics := envelope.Topics{Prefix: "consolelag" + testenv.RandomSuffix()}
	slot := "console_" + strings.ReplaceAll(topics.Prefix, ".", "_")
	reg := prometheus.NewRegistry()
	answers := prometheus.NewCounterVec(prometheus.CounterOpts{Name: operate.IngestAnswersMetric, Help: "h"}, []string{"kind", "code", "outcome"})
	reg.MustRegister(answers)
	b := setupProcess(t, process{kafka: kafkaAdmin(t), topics: topics, slot: slot, metrics: reg})
	w := b.newWorld(t)
	ctx := context.Background()
	now := time.Now()
	b.op.Sample(ctx, now.Add(-3*time.Minute))
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, slot) })
	answers.WithLabelValues("stripe", "202", "accepted").Add(3) // before a sample whose predecessor read no counter: not charted
	b.op.Sample(ctx, now.Add(-2*time.Minute))
	answers.WithLabelValues("stripe", "202", "accepted").Add(2)
	answers.WithLabelValues("stripe", "401", "bad_signature").Inc()
	b.op.Sample(ctx, now.Add(-time.Minute))

	page := b.page(t, b.signedIn(t, admintoken.RoleRead, ""), console.Prefix+"/")
	contains(t, "the operator's overview", page, "Consumer lag per group over the last hour", "(3 samples, one every 15 s",
		topics.Resource("credits")+": no offset committed this hour", "WAL retained by the relay's slot over the last hour")
	contains(t, "the answers' legend", page, "Ingest's answers by outcome", "accepted: 2</li>", "bad_signature: 1</li>")
	if !regexp.MustCompile(`over the same hour: \d+ now`).MatchString(page) {
		t.Errorf("the overview does not say the slot's latest retained WAL")
	}
	slotChart := page[strings.Index(page, `id="slot-chart"`):]
	slotChart = slotChart[:strings.Index(slotChart, "</svg>")]
	lines := regexp.MustCompile(`<polyline points="([^"]*)"`).FindAllStringSubmatch(slotChart, -1)
	if len(lines) != 1 || len(strings.Fields(lines[0][1])) != 2 {
		t.Errorf("the slot's chart draws %q, want one line of two samples (after a gap)", lines)
	}
	scoped := b.page(t, b.signedIn(t, admintoken.RoleRead, w.tenant), console.Prefix+"/")
	for _, s := range []string{"Consumer lag", "slot", topics.Prefix, "answers by outcome"} {
		if strings.Contains(scoped, s) {
			t.Errorf("a tenant-scoped overview shows %q", s)
		}
	}
}
