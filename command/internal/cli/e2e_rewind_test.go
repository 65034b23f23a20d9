package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Invariant 6: exactly-once effects across a kill -9 of a `sluice consume`
// process in the middle of its work under load, and across full rewinds of
// every group to the earliest offset, once with `sluice replay` and once
// with Kafka's own kafka-consumer-groups --reset-offsets: after each, zero
// new grants, identical balances, projections and alerts, row for row
// (processed_at included, so nothing was even rewritten). The dispatcher runs
// too, against a service that deduplicates on Idempotency-Key: every intent
// is acknowledged once, and the rewinds call the service no more.
func TestKillAndRewindsChangeNoEffect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := sluiceBinary(t)
	topics := envelope.Topics{Prefix: "inv6" + testenv.RandomSuffix() + ".sluice"}
	adm := kadmClient(t)
	if err := kafka.EnsureTopics(ctx, adm, kafka.TopicSpec{Partitions: 3, Retention: time.Hour}, groups.Topics(topics, builtintest.Options(t, topics).Effects)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), adm, topics.Resource("")) })
	svc := newDedupService(t)
	specs := groups.List(topics, groups.Options{Effects: builtintest.Options(t, topics).Effects, Dispatch: dispatch.Config{URL: svc.url, Secret: dispatchSecret}})
	var groupIDs []string
	for _, g := range specs {
		groupIDs = append(groupIDs, g.ID)
	}
	w := newWorkload(t, topics)
	startConsume := func(t *testing.T, bin string, topics envelope.Topics) *consumeProc {
		return startConsumeProc(t, bin, topics, "--dispatch-url", svc.url, "--dispatch-secret", dispatchSecret)
	}

	// Under load: the consumer starts on an empty backlog, commits part of
	// the first half, and is killed as soon as the second half is written,
	// with that half still to apply. Waiting to catch it between a commit
	// and the end would depend on the consumer being slow enough.
	c := startConsume(t, bin, topics)
	half := len(w.batches) / 2
	w.produce(t, w.batches[:half])
	testenv.Eventually(t, 2*time.Minute, "the credits group to commit part of the first half", func() (bool, error) {
		committed, _ := progress(ctx, adm, topics.Resource("credits"), topics.Resource("invoices"))
		return committed > 0, nil
	})
	w.produce(t, w.batches[half:])
	c.kill(t)
	if t.Failed() {
		return
	}
	c = startConsume(t, bin, topics)
	w.waitIntentsPublished(t, adm)
	waitCaughtUp(t, adm, specs)
	// The deliverer sends the intents apart from the groups: waited for
	// before the process stops.
	requests := svc.check(t, w.intents(t))
	before := w.snapshot(t)
	w.checkExpected(t)
	c.stop(t)

	// After each rewind every group starts over from the earliest offset
	// and must end with the same effects, row for row.
	rewound := func(how string) {
		t.Helper()
		assertAtStart(t, adm, groupIDs)
		c := startConsume(t, bin, topics)
		waitCaughtUp(t, adm, specs)
		if after := w.snapshot(t); after != before {
			t.Errorf("effects changed after %s:\nbefore %s\nafter  %s", how, before, after)
		}
		c.stop(t)
	}
	for _, g := range groupIDs {
		runSluice(t, bin, topics, "replay", "--group", g, "--to-earliest", "--execute")
	}
	rewound("`sluice replay --to-earliest`")

	kcg := filepath.Join("..", "..", "..", "dev", "kafka", "bin", "kafka-consumer-groups")
	for _, g := range groupIDs {
		out, err := exec.Command(kcg, "--bootstrap-server", strings.Join(suite.brokers, ","), "--group", g,
			"--reset-offsets", "--to-earliest", "--all-topics", "--execute").CombinedOutput()
		if err != nil {
			t.Fatalf("kafka-consumer-groups --reset-offsets %s: %v\n%s", g, err, out)
		}
	}
	rewound("kafka-consumer-groups --reset-offsets --to-earliest")
	if again := svc.check(t, w.intents(t)); again != requests {
		t.Errorf("the service got %d requests after the rewinds, want none", again-requests)
	}
	checkLagAndDryRuns(t, adm, topics)
}

// checkLagAndDryRuns reads `sluice lag` and `sluice replay` dry runs of the
// caught-up, stopped credits group: lag 0 everywhere; a time after the last
// record and --to-latest both land on the end; --to-offset is kept within
// each partition; nothing is committed.
func checkLagAndDryRuns(t *testing.T, adm *kadm.Client, topics envelope.Topics) {
	t.Helper()
	ctx := context.Background()
	group := topics.Resource("credits")
	rows, err := offsets.Lag(ctx, adm, group)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("lag rows = %d, want 3 partitions", len(rows))
	}
	for _, r := range rows {
		if r.State != "Empty" || r.Lag != 0 || r.Committed != r.End || r.Start != 0 {
			t.Errorf("lag row %+v", r)
		}
	}
	for name, target := range map[string]offsets.Target{
		"latest":    {Latest: true},
		"to-time":   {Time: time.Now().Add(time.Minute)},
		"to-offset": {Offset: 1 << 40},
	} {
		moves, err := rewindGroup(ctx, adm, operate.Config{Topics: topics, Groups: builtintest.Options(t, topics)}, group, target, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, m := range moves {
			if m.New != m.Current {
				t.Errorf("%s: %s/%d would move %d -> %d, want the end", name, m.Topic, m.Partition, m.Current, m.New)
			}
		}
	}
	moves, err := rewindGroup(ctx, adm, operate.Config{Topics: topics, Groups: builtintest.Options(t, topics)}, group, offsets.Target{Offset: 0}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range moves {
		if m.New != 0 {
			t.Errorf("to-offset 0: %s/%d -> %d", m.Topic, m.Partition, m.New)
		}
	}
	if committed, end := progress(ctx, adm, group, topics.Resource("invoices")); committed != end {
		t.Errorf("a dry run committed: %d of %d", committed, end)
	}
}

// workload is one tenant's mixed backlog: invoices paid (each delivered
// twice, plus a second event id), refunds, shuffled subscription,
// installation and verification histories, feedback with duplicates and
// escalations.
type workload struct {
	topics                   envelope.Topics
	stripe, github, standard consumertest.Fixture
	workspaces               []string
	customers                []string
	batches                  [][]*kgo.Record
}

const (
	workloadInvoices = 3000
	workloadRefunds  = 300
	workloadObjects  = 200
)

func newWorkload(t *testing.T, topics envelope.Topics) *workload {
	t.Helper()
	ctx := context.Background()
	f := newTenant(t)
	w := &workload{topics: topics}
	source := func(kind string) consumertest.Fixture {
		account := kind + "_" + testenv.RandomSuffix()
		id, err := suite.store.CreateSource(ctx, tenancy.NewSource{TenantID: f.tenantID, Kind: kind, Account: account, Secret: "whsec_" + testenv.RandomSuffix() + testenv.RandomSuffix()})
		if err != nil {
			t.Fatal(err)
		}
		return consumertest.Fixture{TenantID: f.tenantID, SourceID: id, Account: account}
	}
	w.stripe = consumertest.Fixture{TenantID: f.tenantID, SourceID: f.sourceID, Account: f.account}
	w.github, w.standard = source("github"), source("standard_webhooks")
	w.workspaces, w.customers = []string{f.workspaceID}, []string{f.customer}
	for i := range 4 {
		customer := fmt.Sprintf("%s_%d", f.customer, i)
		ws, err := suite.store.CreateWorkspace(ctx, f.tenantID, customer, "ws")
		if err != nil {
			t.Fatal(err)
		}
		w.workspaces, w.customers = append(w.workspaces, ws), append(w.customers, customer)
	}

	now := time.Now().Add(-time.Hour).Truncate(time.Second)
	var batch []*kgo.Record
	flush := func() {
		if len(batch) > 0 {
			w.batches = append(w.batches, batch)
			batch = nil
		}
	}
	add := func(topic string, f consumertest.Fixture, id, ceType, objectType, objectID string, body string) {
		batch = append(batch, consumertest.Record(topics.Resource(topic), f.Event(id, ceType, objectType, objectID, now), []byte(body)))
		if len(batch) == 500 {
			flush()
		}
	}
	for i := range workloadInvoices {
		inv := fmt.Sprintf("in_%d", i)
		body := fmt.Sprintf(`{"id":"evt_%d","object":"event","type":"invoice.paid","created":%d,"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":500,"status":"paid"}}}`,
			i, now.Unix(), inv, w.customers[i%len(w.customers)])
		add("invoices", w.stripe, fmt.Sprintf("evt_%d", i), "stripe.invoice.paid", "invoice", inv, body)
		add("invoices", w.stripe, fmt.Sprintf("evt_%d", i), "stripe.invoice.paid", "invoice", inv, body)
		add("invoices", w.stripe, fmt.Sprintf("evt_%d_repair", i), "stripe.invoice.paid", "invoice", inv, body)
		if i < workloadRefunds {
			add("invoices", w.stripe, fmt.Sprintf("evt_r%d", i), "stripe.charge.refunded", "invoice", inv,
				fmt.Sprintf(`{"id":"evt_r%d","object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":"ch_%d","object":"charge","invoice":%q,"amount_refunded":500}}}`, i, now.Unix(), i, inv))
		}
	}
	for i := range workloadObjects {
		sub := fmt.Sprintf("sub_%d", i)
		for _, s := range consumertest.Shuffled([]struct {
			typ, status string
			at          int64
		}{{"created", "trialing", 0}, {"updated", "active", 1}, {"updated", "past_due", 2}, {"updated", "active", 3}}) {
			id := fmt.Sprintf("evt_%s_%d", sub, s.at)
			add("subscriptions", w.stripe, id, "stripe.customer.subscription."+s.typ, "subscription", sub,
				fmt.Sprintf(`{"id":%q,"type":"customer.subscription.%s","created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":"c","status":%q}}}`, id, s.typ, now.Unix()+s.at, sub, s.status))
		}
		inst := fmt.Sprint(1000 + i)
		for _, s := range consumertest.Shuffled([]struct {
			action string
			at     int64
		}{{"created", 0}, {"suspend", 1}, {"unsuspend", 2}}) {
			add("github", w.github, fmt.Sprintf("d-%s-%d", inst, s.at), "github.installation."+s.action, "installation", inst,
				fmt.Sprintf(`{"action":%q,"installation":{"id":%s,"account":{"id":%d,"login":"o"},"updated_at":%d}}`, s.action, inst, 5000+i, now.Unix()+s.at))
		}
		ver := fmt.Sprintf("ver_%d", i)
		for _, s := range consumertest.Shuffled([]struct {
			status string
			at     int64
		}{{"pending", 0}, {"in_review", 1}, {[]string{"approved", "rejected"}[i%2], 2}}) {
			add("verifications", w.standard, fmt.Sprintf("msg_%s_%d", ver, s.at), "standard_webhooks.verification."+s.status, "verification", ver,
				fmt.Sprintf(`{"type":"verification.%s","timestamp":%q,"data":{"id":%q}}`, s.status, now.Add(time.Duration(s.at)*time.Second).Format(time.RFC3339), ver))
		}
		fb := fmt.Sprintf("fb_%d", i)
		created := fmt.Sprintf(`{"type":"feedback.created","timestamp":%q,"data":{"id":%q,"project_id":"p"}}`, now.Format(time.RFC3339), fb)
		add("feedback", w.standard, "msg_"+fb, "standard_webhooks.feedback.created", "feedback", fb, created)
		add("feedback", w.standard, "msg_"+fb, "standard_webhooks.feedback.created", "feedback", fb, created)
		if i%2 == 0 {
			add("feedback", w.standard, "msg_esc_"+fb, "standard_webhooks.feedback.escalated", "feedback", fb,
				fmt.Sprintf(`{"type":"feedback.escalated","timestamp":%q,"data":{"id":%q,"project_id":"p","level":1}}`, now.Format(time.RFC3339), fb))
		}
	}
	flush()
	return w
}

func (w *workload) produce(t *testing.T, batches [][]*kgo.Record) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	for _, b := range batches {
		if err := cl.ProduceSync(context.Background(), b...).FirstErr(); err != nil {
			t.Error(err)
			return
		}
	}
}

// snapshot digests every effect of the tenant, row for row.
func (w *workload) snapshot(t *testing.T) string {
	t.Helper()
	var parts []string
	for _, q := range []string{
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', object_id, operation, workspace_id, credits, processed_at), ',' ORDER BY object_id, operation)), '') FROM credit_grants WHERE tenant_id = $1`,
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', object_id, operation, credits, processed_at), ',' ORDER BY object_id)), '') FROM credit_reversals WHERE tenant_id = $1`,
		`SELECT coalesce(md5(string_agg(concat_ws('|', workspace_id, credits, updated_at), ',' ORDER BY workspace_id)), '') FROM balances WHERE tenant_id = $1`,
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', subscription_id, status, version_event_id, processed_at), ',' ORDER BY subscription_id)), '') FROM subscriptions WHERE tenant_id = $1`,
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', installation_id, state, version_event_id, processed_at), ',' ORDER BY installation_id)), '') FROM github_installations WHERE tenant_id = $1`,
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', verification_id, status, version_event_id, processed_at), ',' ORDER BY verification_id)), '') FROM verifications WHERE tenant_id = $1`,
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', feedback_id, operation, processed_at), ',' ORDER BY feedback_id, operation)), '') FROM feedback_alerts WHERE tenant_id = $1`,
		`SELECT count(*)::text FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND topic = $2`,
		`SELECT count(*)::text FROM dead_letters WHERE headers->>'ce_tenantid' = $1::text`,
		`SELECT count(*)::text || ':' || coalesce(md5(string_agg(concat_ws('|', id, webhook_id), ',' ORDER BY id)), '') FROM deliveries
			WHERE webhook_id IN (SELECT headers->>'ce_id' FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND topic = $2)`,
	} {
		var s string
		args := []any{w.stripe.TenantID}
		if strings.Contains(q, "$2") {
			args = append(args, w.topics.Resource("notifications"))
		}
		if err := suite.pool.QueryRow(context.Background(), q, args...).Scan(&s); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// checkExpected compares the effects with what the workload should produce.
func (w *workload) checkExpected(t *testing.T) {
	t.Helper()
	tenant := w.stripe.TenantID
	for q, want := range map[string]int{
		`SELECT count(*) FROM credit_grants WHERE tenant_id = $1`:                                   workloadInvoices,
		`SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND credits = 100`:              workloadRefunds,
		`SELECT sum(credits)::int FROM balances WHERE tenant_id = $1`:                               100 * (workloadInvoices - workloadRefunds),
		`SELECT count(*) FROM subscriptions WHERE tenant_id = $1 AND status = 'active'`:             workloadObjects,
		`SELECT count(*) FROM github_installations WHERE tenant_id = $1 AND state = 'active'`:       workloadObjects,
		`SELECT count(*) FROM verifications WHERE tenant_id = $1 AND final`:                         workloadObjects,
		`SELECT count(*) FROM feedback_alerts WHERE tenant_id = $1 AND operation = 'initial-alert'`: workloadObjects,
		`SELECT count(*) FROM feedback_alerts WHERE tenant_id = $1 AND operation = 'escalation-1'`:  workloadObjects / 2,
		`SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $1::text`:                0,
	} {
		if got := count(t, q, tenant); got != want {
			t.Errorf("%s = %d, want %d", q, got, want)
		}
	}
}

// dispatchSecret signs the dispatcher's calls in these tests.
const dispatchSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// sluiceBinary builds ../cmd/sluice for the test, which runs it as
// separate processes (a kill -9 must hit a process, not a goroutine).
func sluiceBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sluice")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/sluice").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func sluiceEnv(topics envelope.Topics) []string {
	return append(hostEnviron(),
		"SLUICE_DATABASE_URL="+cliDatabaseURL(),
		"SLUICE_KAFKA_BROKERS="+strings.Join(suite.brokers, ","),
		"SLUICE_TOPIC_PREFIX="+topics.Resource("")[:len(topics.Resource(""))-1],
		"SLUICE_LOG_LEVEL=warn",
	)
}

// hostEnviron is this process's environment without what .run/env sets for
// make run's own deployment (its listeners, their URLs, its endpoint
// policy), so a command a test runs has only the settings the test gives.
func hostEnviron() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "SLUICE_DELIVERY_"), k == "SLUICE_HTTP_ADDR", k == "SLUICE_ADMIN_ADDR",
			k == "SLUICE_INGEST_URL", k == "SLUICE_ADMIN_URL":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// consumeProc is a `sluice consume` subprocess.
type consumeProc struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
}

func startConsumeProc(t *testing.T, bin string, topics envelope.Topics, extra ...string) *consumeProc {
	t.Helper()
	return startConsumeProcIn(t, bin, sluiceEnv(topics), extra...)
}

// startConsumeProcIn runs `sluice consume` with the environment env.
func startConsumeProcIn(t *testing.T, bin string, env []string, extra ...string) *consumeProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"consume", "--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--topic-partitions", "3", "--no-migrate"}, extra...)...)
	cmd.Env = append(env, consumeRoleEnv()...)
	c := &consumeProc{cmd: cmd, out: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = c.out, c.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
		c.done <- nil
		if t.Failed() {
			t.Logf("sluice consume output:\n%s", c.out)
		}
	})
	return c
}

// kill is kill -9: no drain, no commit, no leaving the group.
func (c *consumeProc) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
	c.done <- nil
}

// stop is SIGTERM: the process drains, commits and leaves the group.
func (c *consumeProc) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		c.done <- nil
		if err != nil {
			t.Fatalf("sluice consume after SIGTERM: %v\n%s", err, c.out)
		}
	case <-time.After(time.Minute):
		t.Fatalf("sluice consume did not stop within a minute of SIGTERM\n%s", c.out)
	}
}

func runSluice(t *testing.T, bin string, topics envelope.Topics, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = sluiceEnv(topics)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sluice %v: %v\n%s", args, err, out)
	}
}

func kadmClient(t *testing.T) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// progress sums a group's committed offsets and the topic's end offsets.
func progress(ctx context.Context, adm *kadm.Client, group, topic string) (committed, end int64) {
	offsets, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return 0, 0
	}
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0
	}
	ends.Each(func(o kadm.ListedOffset) {
		end += o.Offset
		if c, ok := offsets.Lookup(topic, o.Partition); ok {
			committed += c.At
		}
	})
	return committed, end
}

// waitCaughtUp waits until every group committed every record of its topics.
func waitCaughtUp(t *testing.T, adm *kadm.Client, specs []groups.Group) {
	t.Helper()
	ctx := context.Background()
	testenv.Eventually(t, 3*time.Minute, "every group to commit its whole backlog", func() (bool, error) {
		for _, g := range specs {
			for _, topic := range g.Topics {
				committed, end := progress(ctx, adm, g.ID, topic)
				if end == 0 || committed < end {
					return false, fmt.Errorf("%s on %s: %d of %d", g.ID, topic, committed, end)
				}
			}
		}
		return true, nil
	})
}

// assertAtStart checks a rewind moved every committed offset back to 0
// (the topics are new: their log starts at 0).
func assertAtStart(t *testing.T, adm *kadm.Client, groupIDs []string) {
	t.Helper()
	for _, g := range groupIDs {
		offsets, err := adm.FetchOffsets(context.Background(), g)
		if err != nil {
			t.Fatal(err)
		}
		offsets.Each(func(o kadm.OffsetResponse) {
			if o.At != 0 {
				t.Errorf("%s %s/%d at %d after the rewind, want 0", g, o.Topic, o.Partition, o.At)
			}
		})
	}
}

// intents lists the idempotency keys of the notification intents the
// workload's effects wrote.
func (w *workload) intents(t *testing.T) []string {
	t.Helper()
	rows, err := suite.pool.Query(context.Background(), `SELECT headers->>'ce_id' FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND topic = $2`,
		w.stripe.TenantID, w.topics.Resource("notifications"))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// waitIntentsPublished waits until the suite's relay published every intent
// to the workload's notifications topic (the relay serves the whole database).
func (w *workload) waitIntentsPublished(t *testing.T, adm *kadm.Client) {
	t.Helper()
	want := int64(len(w.intents(t)))
	testenv.Eventually(t, 2*time.Minute, "the intents to reach the notifications topic", func() (bool, error) {
		_, end := progress(context.Background(), adm, "-", w.topics.Resource("notifications"))
		return end >= want, nil
	})
}

// dedupService is an e-mail API that deduplicates on Idempotency-Key.
type dedupService struct {
	url      string
	mu       sync.Mutex
	requests int
	sent     map[string]bool
}

func newDedupService(t *testing.T) *dedupService {
	s := &dedupService{sent: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.sent[r.Header.Get(delivery.IdempotencyKeyHeader)] = true
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// check waits for every intent's delivery, then verifies each was
// acknowledged once, and returns the number of requests so far.
func (s *dedupService) check(t *testing.T, keys []string) int {
	t.Helper()
	testenv.Eventually(t, time.Minute, "every intent delivered", func() (bool, error) {
		return count(t, `SELECT count(*) FROM deliveries WHERE webhook_id = ANY($1) AND state = 'delivered'`, keys) == len(keys), nil
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if !s.sent[k] {
			t.Errorf("intent %s never reached the service", k)
		}
	}
	if len(s.sent) != len(keys) {
		t.Errorf("the service saw %d keys, want %d", len(s.sent), len(keys))
	}
	if n := count(t, `SELECT count(*) FROM deliveries WHERE webhook_id = ANY($1)`, keys); n != len(keys) {
		t.Errorf("%d deliveries for %d intents", n, len(keys))
	}
	return s.requests
}
