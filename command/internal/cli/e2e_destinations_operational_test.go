package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// startServeProcIn runs `sluice serve` (ingest, the relay, the consumers
// and the deliverer) with the environment env.
func startServeProcIn(t *testing.T, bin string, env []string) *consumeProc {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--topic-partitions", "3", "--no-migrate")
	cmd.Env = env
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
			t.Logf("sluice serve output:\n%s", c.out)
		}
	})
	return c
}

// opEvent is an operational event as a receiver got it.
type opEvent struct {
	webhookID, ceID string
	body            endpoints.OperationalBody
}

// operationalReceiver keeps the operational events an endpoint received,
// each verified with Svix's library under secret; any other request is
// answered 2xx and left out.
type operationalReceiver struct {
	*endpointServer
	secret string
}

func (o *operationalReceiver) events(t *testing.T) []opEvent {
	t.Helper()
	wh, err := svix.NewWebhook(o.secret)
	if err != nil {
		t.Fatal(err)
	}
	var out []opEvent
	for _, r := range o.requests() {
		if !endpoints.IsOperational(r.header.Get("ce-type")) {
			continue
		}
		if err := wh.Verify(r.body, r.header); err != nil {
			t.Errorf("an operational event does not verify: %v", err)
		}
		var b endpoints.OperationalBody
		if err := json.Unmarshal(r.body, &b); err != nil {
			t.Fatalf("body %s: %v", r.body, err)
		}
		out = append(out, opEvent{webhookID: r.header.Get("webhook-id"), ceID: r.header.Get("ce-id"), body: b})
	}
	return out
}

// distinct counts, per event type and endpoint it is about, the distinct
// webhook-ids received (a kill may send one again: once per id is the
// receiver's to keep).
func distinct(evs []opEvent) map[string]int {
	seen := map[string]bool{}
	n := map[string]int{}
	for _, e := range evs {
		if !seen[e.webhookID] {
			seen[e.webhookID] = true
			n[string(e.body.Type)+" "+e.body.Data.EndpointID]++
		}
	}
	return n
}

// An endpoint that fails until it is disabled is told, once each, as
// failing and disabled to its tenant's other subscribed endpoint (signed,
// verifiable) and to the deployment's, never to itself; one that fails for
// a while and answers again is told failing then recovered; a kill -9 of
// the delivering process after each transition tells nothing twice; and
// another tenant's endpoints receive nothing of it.
func TestEndpointTransitionsAreToldOnceToTheOthersAndNeverToItself(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := sluiceBinary(t)
	dbURL, pool := ownDatabase(t, "opevents")
	suffix := testenv.RandomSuffix()
	topics := envelope.Topics{Prefix: "ops" + suffix + ".sluice"}
	slot := "sluice_ops_" + suffix
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1 AND NOT active`, slot)
	})
	adm := kadmClient(t)
	if err := kafka.EnsureTopics(ctx, adm, kafka.TopicSpec{Partitions: 3, Retention: time.Hour}, groups.Topics(topics, builtintest.Options(t, topics).Effects)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), adm, topics.Resource("")) })

	var tenant, other string
	if err := pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('ops') RETURNING id::text`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	if err := pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('ops-other') RETURNING id::text`).Scan(&other); err != nil {
		t.Fatal(err)
	}
	// dead always fails; flaky fails until told to answer; the watcher
	// takes the tenant's operational events; the other tenant's endpoint
	// takes everything of its tenant.
	dead, _ := newEndpointIn(t, pool, tenant, newEndpointServer(t, func(*http.Request, []byte) int { return http.StatusInternalServerError }).URL, true, "*")
	var healed atomic.Bool
	flakyServer := newEndpointServer(t, func(*http.Request, []byte) int {
		if healed.Load() {
			return http.StatusOK
		}
		return http.StatusServiceUnavailable
	})
	flaky, _ := newEndpointIn(t, pool, tenant, flakyServer.URL, true, "sluice.email.*", "sluice.endpoint.*")
	watcherServer := newEndpointServer(t, nil)
	watcher, watcherSecret := newEndpointIn(t, pool, tenant, watcherServer.URL, true, "sluice.endpoint.*")
	stranger, _ := newEndpointIn(t, pool, other, newEndpointServer(t, nil).URL, true, "*")
	// The deployment's own endpoint, signed with its --dispatch-secret.
	deployment := &operationalReceiver{endpointServer: newEndpointServer(t, nil), secret: dispatchSecret}
	watch := &operationalReceiver{endpointServer: watcherServer, secret: watcherSecret}

	env := append(os.Environ(),
		"SLUICE_DATABASE_URL="+dbURL,
		"SLUICE_KAFKA_BROKERS="+strings.Join(suite.brokers, ","),
		"SLUICE_TOPIC_PREFIX="+strings.TrimSuffix(topics.Resource(""), "."),
		"SLUICE_SECRET_KEY="+suite.secretKey,
		"SLUICE_SLOT="+slot,
		"SLUICE_DISPATCH_URL="+deployment.URL,
		"SLUICE_DISPATCH_SECRET="+dispatchSecret,
		"SLUICE_DISPATCH_OPERATIONAL=true",
		"SLUICE_DELIVERY_ALLOW_HTTP=true",
		"SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8",
		"SLUICE_DELIVERY_TIMEOUT=2s",
		"SLUICE_DELIVERY_BACKOFF=50ms",
		"SLUICE_DELIVERY_BACKOFF_MAX=300ms",
		"SLUICE_DELIVERY_FAILING_NOTICE=1s",
		"SLUICE_DELIVERY_FAILING_HORIZON=6s",
		"SLUICE_ENDPOINTS_REFRESH=100ms",
		"SLUICE_LOG_LEVEL=warn",
	)
	proc := startServeProcIn(t, bin, env)
	if err := waitForSlot(ctx, pool, slot, time.Minute); err != nil {
		t.Fatal(err)
	}

	// One intent each for the two tenants: the dead and the flaky endpoint
	// start failing on the first.
	f := consumertest.Fixture{TenantID: tenant, SourceID: "00000000-0000-0000-0000-000000000001", Account: "acct"}
	g := consumertest.Fixture{TenantID: other, SourceID: "00000000-0000-0000-0000-000000000002", Account: "acct"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	notifications := topics.Resource("notifications")
	if err := cl.ProduceSync(ctx,
		consumertest.Record(notifications, f.Event("ops-1", "sluice.email.test", "workspace", "w1", time.Now()), []byte(`{"n":1}`)),
		consumertest.Record(notifications, g.Event("ops-2", "sluice.email.test", "workspace", "w2", time.Now()), []byte(`{"n":2}`)),
	).FirstErr(); err != nil {
		t.Fatal(err)
	}
	until := func(what string, within time.Duration, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(within); !done(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s; the watcher has %v", what, within, distinct(watch.events(t)))
			}
		}
	}
	told := func(typ endpoints.OperationalType, endpoint string) func() bool {
		return func() bool { return distinct(watch.events(t))[string(typ)+" "+endpoint] > 0 }
	}
	countIn := func(query string, args ...any) int {
		t.Helper()
		var n int
		if err := pool.QueryRow(ctx, query, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	written := func(typ endpoints.OperationalType, endpoint string) func() bool {
		return func() bool {
			return countIn(`SELECT count(*) FROM inbox WHERE source_id = $1 AND source_account = $2 AND event_type = $3`,
				endpoints.OperationalSourceID, endpoint, string(typ)) > 0
		}
	}

	// The flaky endpoint answers again once it was told failing (the
	// notice, 1s): its recovery is told.
	until("the flaky endpoint told failing", time.Minute, written(endpoints.EndpointFailing, flaky))
	healed.Store(true)
	until("the flaky endpoint told recovered", time.Minute, written(endpoints.EndpointRecovered, flaky))
	// kill -9 once the dead one's failing reached the watcher, and again
	// as soon as its row says it is disabled (its failing horizon, 6s),
	// whether or not that event left yet: each next process goes on from
	// the rows.
	until("the dead endpoint told failing", time.Minute, told(endpoints.EndpointFailing, dead))
	proc.kill(t)
	proc = startServeProcIn(t, bin, env)
	until("the dead endpoint disabled", time.Minute, func() bool {
		return countIn(`SELECT count(*) FROM endpoints WHERE id = $1 AND disabled_reason = 'failing'`, dead) == 1
	})
	proc.kill(t)
	proc = startServeProcIn(t, bin, env)
	until("the watcher told everything", 2*time.Minute, func() bool { return len(distinct(watch.events(t))) == 4 })
	until("the deployment's endpoint told everything", time.Minute, func() bool { return len(distinct(deployment.events(t))) == 4 })
	proc.stop(t)

	want := map[string]int{
		string(endpoints.EndpointFailing) + " " + dead:    1,
		string(endpoints.EndpointDisabled) + " " + dead:   1,
		string(endpoints.EndpointFailing) + " " + flaky:   1,
		string(endpoints.EndpointRecovered) + " " + flaky: 1,
	}
	for name, r := range map[string]*operationalReceiver{"the watcher": watch, "the deployment's endpoint": deployment} {
		if got := distinct(r.events(t)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s received %v, want %v", name, got, want)
		}
	}
	for _, e := range watch.events(t) {
		if e.body.Data.TenantID != tenant {
			t.Errorf("an event of tenant %s reached the watcher", e.body.Data.TenantID)
		}
		if e.body.Type == endpoints.EndpointDisabled && (e.body.Data.Reason != endpoints.ReasonFailing || e.body.Data.Trigger != "automatic") {
			t.Errorf("disabled: %+v", e.body.Data)
		}
	}
	// The business keys: one inbox row per transition, whatever the kills.
	if n := countIn(`SELECT count(*) FROM inbox WHERE source_id = $1`, endpoints.OperationalSourceID); n != 4 {
		t.Errorf("%d operational events in the inbox, want 4", n)
	}
	if n := countIn(`SELECT count(*) FROM deliveries WHERE endpoint_id = $1`, watcher); n != 4 {
		t.Errorf("the watcher has %d deliveries, want 4", n)
	}
	// No endpoint was given news of itself, and the other tenant none.
	if n := countIn(`SELECT count(*) FROM deliveries WHERE event_type LIKE 'sluice.endpoint.%' AND subject = endpoint_id::text`); n != 0 {
		t.Errorf("%d operational deliveries to the endpoint they are about", n)
	}
	if n := countIn(`SELECT count(*) FROM deliveries WHERE event_type LIKE 'sluice.endpoint.%' AND (endpoint_id = $1 OR tenant_id = $2)`, stranger, other); n != 0 {
		t.Errorf("%d operational deliveries to the other tenant", n)
	}
	if n := countIn(`SELECT count(*) FROM deliveries WHERE endpoint_id = $1`, stranger); n != 1 {
		t.Errorf("the other tenant's endpoint has %d deliveries, want its own intent's", n)
	}
}
