package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/testenv"
)

// missingRow commits a copy of the outbox's first row with its topic
// renamed to topic (what a process with other resource types, or a topic
// deleted by hand, produces) and returns its id and a position inside its
// transaction: once the slot's confirmed position reaches it, the row's
// transaction is confirmed.
func missingRow(t *testing.T, b *bundle, topic string) (string, pglogrepl.LSN) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	var id, lsn string
	err = tx.QueryRow(ctx, `INSERT INTO outbox (topic, key, headers, payload, inbox_id)
		SELECT $1, key, headers || jsonb_build_object('ce_id', 'copied'), payload, inbox_id FROM outbox ORDER BY id LIMIT 1
		RETURNING id::text, pg_current_wal_insert_lsn()::text`, topic).Scan(&id, &lsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	pos, err := pglogrepl.ParseLSN(lsn)
	if err != nil {
		t.Fatal(err)
	}
	return id, pos
}

// slotConfirmed is the slot's confirmed_flush_lsn in Postgres.
func (b *bundle) slotConfirmed(t *testing.T) pglogrepl.LSN {
	t.Helper()
	var lsn string
	err := b.pool.QueryRow(context.Background(), `SELECT coalesce(confirmed_flush_lsn, '0/0')::text FROM pg_replication_slots WHERE slot_name = $1`, b.slot).Scan(&lsn)
	if err != nil {
		t.Fatal(err)
	}
	pos, err := pglogrepl.ParseLSN(lsn)
	if err != nil {
		t.Fatal(err)
	}
	return pos
}

// One outbox row naming a topic that does not exist (and that the relay
// may not create): within the grace the row is parked with its reason and
// the slot's confirmed position passes it, in the same session (no restart,
// so nothing else is published twice); the rows after it flow on; once the
// topic exists, publishing the parked record puts it in Kafka, once.
func TestRecordForAMissingTopicIsParkedWithinTheGrace(t *testing.T) {
	t.Parallel()
	b := setup(t, "missing")
	c := b.collect()
	ctx := context.Background()
	const grace = 3 * time.Second
	r := b.startRelay(Config{MissingTopicGrace: grace}, b.db.URL)
	r.waitStreaming(t)
	_, pid := b.slotHolder(ctx)

	insertRows(t, b, "before", 20)
	missing := b.prefix + ".notifications.missing"
	id, pos := missingRow(t, b, missing)
	committed := time.Now()
	t.Logf("row %s committed at %s", id, committed.Format(time.StampMilli))
	insertRows(t, b, "after", 20)

	b.movesPast(t, c, id, pos, committed, grace, pid)
	var reason string
	if err := b.pool.QueryRow(ctx, `SELECT reason FROM cdc_parked WHERE topic = $1 AND headers->>'sluice_outboxid' = $2`, missing, id).Scan(&reason); err != nil {
		t.Fatalf("the record is not parked: %v", err)
	}
	if !strings.Contains(reason, "UNKNOWN_TOPIC_OR_PARTITION") {
		t.Errorf("parked with reason %q, want the topic's absence", reason)
	}
	if n := r.parkedBy(t, ReasonMissingTopic); n != 1 {
		t.Errorf("parked records counted for a missing topic: %v, want 1", n)
	}

	insertRows(t, b, "later", 20)
	if dups := c.waitForAll(t, without(b.outbox(time.Time{}), id), time.Minute); dups != 0 {
		t.Errorf("%d records published twice", dups)
	}

	// The command's work: refused while the topic is missing, then
	// published once it exists, and released.
	opts := []kgo.Opt{kgo.SeedBrokers(b.brokers...)}
	if _, err := PublishParked(ctx, b.pool, opts, ParkedSelection{Topic: missing}); !errors.Is(err, ErrTopicMissing) {
		t.Fatalf("publishing to a topic still missing: %v, want ErrTopicMissing", err)
	}
	b.createTopic(t, missing, 3)
	cmd := exec.Command(sluiceBin(t), "cdc", "parked", "publish", "--topic", missing, "-o", "json")
	cmd.Env = append(os.Environ(), "SLUICE_DATABASE_URL="+b.db.URL, "SLUICE_KAFKA_BROKERS="+b.brokers[0], "SLUICE_LOG_LEVEL=warn")
	out, err := cmd.Output()
	var published struct {
		Published int     `json:"published"`
		IDs       []int64 `json:"ids"`
	}
	if err != nil || json.Unmarshal(out, &published) != nil || published.Published != 1 || len(published.IDs) != 1 {
		t.Fatalf("sluice cdc parked publish --topic: %s, %v; want the one parked record", out, err)
	}
	if got := b.topicRecords(t, missing); len(got) != 1 || got[id] != 1 {
		t.Errorf("the topic holds %v (outbox id: times), want the row %s once", got, id)
	}
	if _, err := PublishParked(ctx, b.pool, opts, ParkedSelection{ID: published.IDs[0]}); !errors.Is(err, ErrAlreadyReleased) {
		t.Errorf("publishing it again: %v, want ErrAlreadyReleased", err)
	}
}

// createTopic creates topic (under the bundle's prefix, so removed with it).
func (b *bundle) createTopic(t *testing.T, topic string, partitions int32) {
	t.Helper()
	admin, err := kafka.NewClient(kafka.Config{Brokers: b.brokers})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if err := kafka.EnsureTopics(context.Background(), kadm.NewClient(admin), kafka.TopicSpec{Partitions: partitions, Retention: time.Hour}, topic); err != nil {
		t.Fatal(err)
	}
}

// topicRecords reads topic from its start to its end offsets as of now and
// counts its records by outbox id.
func (b *bundle) topicRecords(t *testing.T, topic string) map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(0)
	ends.Each(func(o kadm.ListedOffset) { want += o.Offset })
	got := map[string]int{}
	for n := int64(0); n < want; {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of the %d records of %s", n, want, topic)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			n++
			for _, h := range r.Headers {
				if h.Key == envelope.HeaderOutboxID {
					got[string(h.Value)]++
				}
			}
		})
	}
	return got
}

// without is rows less the one whose id is id.
func without(rows []tableRow, id string) []tableRow {
	var out []tableRow
	for _, row := range rows {
		if row.id != id {
			out = append(out, row)
		}
	}
	return out
}

// parkedBy reads the relay's count of records parked for reason.
func (r *relay) parkedBy(t testing.TB, reason string) float64 {
	t.Helper()
	return testenv.Metric(t, r.reg, "sluice_cdc_records_parked_total", map[string]string{"slot": r.cfg.Slot, "reason": reason})
}

// A missing topic of Sluice's own pattern under the prefix, with
// CreateMissingTopics on: the relay creates it with the configured
// settings and publishes the record there, in the same session; nothing is
// parked or published twice.
func TestMissingTopicOfSluicesOwnIsCreatedWhenAllowed(t *testing.T) {
	t.Parallel()
	b := setup(t, "create")
	c := b.collect()
	ctx := context.Background()
	topics := envelope.Topics{Prefix: b.prefix}
	r := b.startRelay(Config{CreateMissingTopics: true, Topics: topics, TopicSpec: kafka.TopicSpec{Partitions: 2, Retention: time.Hour}}, b.db.URL)
	r.waitStreaming(t)
	_, pid := b.slotHolder(ctx)

	insertRows(t, b, "before", 20)
	missing := topics.Tenant("parcel")
	id, pos := missingRow(t, b, missing)
	insertRows(t, b, "after", 20)

	testenv.Eventually(t, 30*time.Second, "the slot's confirmed position past the row", func() (bool, error) {
		return b.slotConfirmed(t) >= pos, nil
	})
	if got := b.topicRecords(t, missing); len(got) != 1 || got[id] != 1 {
		t.Errorf("the created topic holds %v (outbox id: times), want the row %s once", got, id)
	}
	if dups := c.waitForAll(t, without(b.outbox(time.Time{}), id), time.Minute); dups != 0 {
		t.Errorf("%d records published twice", dups)
	}
	if _, now := b.slotHolder(ctx); now != pid {
		t.Errorf("the relay restarted its stream (walsender %d -> %d)", pid, now)
	}
	admin, err := kafka.NewClient(kafka.Config{Brokers: b.brokers})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	details, err := kadm.NewClient(admin).ListTopics(ctx, missing)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(details[missing].Partitions); n != 2 {
		t.Errorf("created with %d partitions, want the configured 2", n)
	}
	var parked int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM cdc_parked`).Scan(&parked); err != nil || parked != 0 {
		t.Errorf("parked %d (%v), want none", parked, err)
	}
}

func TestCreatableTopicsAreSluicesOwnUnderThePrefix(t *testing.T) {
	topics := envelope.Topics{Prefix: "acme"}
	for topic, want := range map[string]bool{
		"acme.invoices": true, "acme.tenant.order": true, "acme.tenant.new_type": true,
		"acme.notifications.missing": false, "other.invoices": false, "acme.Invoices": false, "acme.": false,
		"acme.tenant.": false, "sluice-credits.dlq": false, "acme.tenant.a.b": false, "acmex.invoices": false,
	} {
		if got := Creatable(topics, topic); got != want {
			t.Errorf("Creatable(%q) = %v, want %v", topic, got, want)
		}
	}
}

// movesPast checks what a record set aside (row id, committed at
// committed, its transaction inside pos) must not do to the others: the
// slot's confirmed position passes it within the grace and a status
// report, every other row reaches Kafka once, and the relay's stream (its
// walsender pid) never restarts.
func (b *bundle) movesPast(t *testing.T, c *collector, id string, pos pglogrepl.LSN, committed time.Time, grace time.Duration, pid int32) {
	t.Helper()
	testenv.Eventually(t, grace+10*time.Second, "the slot's confirmed position past the row", func() (bool, error) {
		return b.slotConfirmed(t) >= pos, nil
	})
	// The relay reports a moved position within promptStatus once it is
	// confirmable; parking commits a row first.
	if took := time.Since(committed); took > grace+2*time.Second {
		t.Errorf("the slot passed the row %s after its commit, want within the grace (%s) and a status report", took, grace)
	}
	if dups := c.waitForAll(t, without(b.outbox(time.Time{}), id), time.Minute); dups != 0 {
		t.Errorf("%d records published twice", dups)
	}
	if _, now := b.slotHolder(context.Background()); now != pid {
		t.Errorf("the relay restarted its stream (walsender %d -> %d)", pid, now)
	}
}
