package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Invariant 8 end to end: an invoice whose customer maps to no workspace is
// dead-lettered after the bounded attempts and reaches <group>.dlq in
// Kafka, with the original headers and the dlq ones; the invoices after it
// are granted; once the customer is mapped, `sluice dlq replay` applies it
// once, and a second replay applies nothing.
func TestPoisonInvoiceReachesTheDLQAndReplaysOnceAfterAFix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	orphan := "cus_orphan_" + s
	poisonID := "evt_poison_" + s
	if code := f.sendSigned(t, invoicePaid(poisonID, "in_poison_"+s, orphan, 1000)); code/100 != 2 {
		t.Fatalf("poison: status %d", code)
	}
	var goodIDs []string
	for i := range 6 {
		id := fmt.Sprintf("evt_good_%s_%d", s, i)
		goodIDs = append(goodIDs, id)
		if code := f.sendSigned(t, invoicePaid(id, fmt.Sprintf("in_good_%s_%d", s, i), f.customer, 1000)); code/100 != 2 {
			t.Fatalf("good %d: status %d", i, code)
		}
	}
	dlq := suite.topics.DeadLetter(suite.group)
	dead := recordsFor(t, dlq, 1, poisonID)[0]
	h := headerMap(dead)
	for k, want := range map[string]string{
		envelope.HeaderID: poisonID, envelope.HeaderType: "stripe.invoice.paid", envelope.HeaderTenantID: f.tenantID,
		consumers.HeaderDLQGroup: suite.group, consumers.HeaderDLQTopic: suite.topics.Resource("invoices"), consumers.HeaderDLQAttempts: "1",
	} {
		if h[k] != want {
			t.Errorf("dlq header %s = %q, want %q", k, h[k], want)
		}
	}
	for _, k := range []string{consumers.HeaderDLQPartition, consumers.HeaderDLQOffset, consumers.HeaderDLQReason, consumers.HeaderDLQFirstFailed, consumers.HeaderDLQLastFailed} {
		if h[k] == "" {
			t.Errorf("dlq header %s missing", k)
		}
	}
	waitConsumed(t, recordsFor(t, suite.topics.Resource("invoices"), len(goodIDs), goodIDs...)...)
	if got := f.grants(t); got != len(goodIDs) {
		t.Fatalf("grants = %d, want %d (the partition kept flowing)", got, len(goodIDs))
	}

	op := operate.New(adminPool(t), nil, operate.Config{Topics: suite.topics, Groups: builtintest.Options(t, suite.topics), Trails: builtintest.Trails()})
	letters, err := op.DeadLetters(ctx, nil, operate.DeadLetterFilter{Group: suite.group, Limit: operate.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var id int64
	for _, d := range letters.Items {
		if d.EventID == poisonID {
			id = d.ID
		}
	}
	if id == 0 {
		t.Fatalf("dlq list has no letter for %s", poisonID)
	}
	// Scrape-time reads are served for 5 s: the letter shows within that.
	testenv.Eventually(t, 30*time.Second, "the letter counted as pending", func() (bool, error) {
		pending, ok := scrape(t)("sluice_dead_letters_pending", `group="`+suite.group+`"`)
		if !ok || pending < 1 {
			return false, fmt.Errorf("sluice_dead_letters_pending for %s = %v (exported %v)", suite.group, pending, ok)
		}
		return true, nil
	})
	replay := func() error {
		_, err := replayDeadLetters(ctx, op, id, operate.DeadLetterFilter{}, slog.New(slog.DiscardHandler))
		return err
	}
	if err := replay(); err == nil {
		t.Fatal("replay before the fix succeeded")
	}
	// The CLI's replay that fails again says why, and which letter.
	stdout, stderr, code := cli(t, "dlq", "replay", "--id", fmt.Sprint(id), "-o", "json")
	var failed struct {
		Error struct {
			Message  string  `json:"message"`
			Replayed []int64 `json:"replayed"`
			FailedID int64   `json:"failed_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stdout), &failed); err != nil || code != 1 || failed.Error.FailedID != id ||
		!strings.Contains(failed.Error.Message, "customer maps to no workspace") || !strings.Contains(stderr, "customer maps to no workspace") {
		t.Errorf("dlq replay --id %d before the fix: exit %d, stdout %q, stderr %q; want 1, the reason and failed_id %d", id, code, stdout, stderr, id)
	}
	if _, err := suite.store.CreateWorkspace(ctx, f.tenantID, orphan, "late"); err != nil {
		t.Fatal(err)
	}
	if err := replay(); err != nil {
		t.Fatalf("replay after the fix: %v", err)
	}
	if err := replay(); !errors.Is(err, consumers.ErrAlreadyReplayed) {
		t.Fatalf("second replay: %v, want ErrAlreadyReplayed", err)
	}
	if got := f.grants(t); got != len(goodIDs)+1 {
		t.Errorf("grants = %d, want %d", got, len(goodIDs)+1)
	}
	if n := count(t, `SELECT count(*) FROM dead_letters WHERE id = $1 AND replayed_at IS NOT NULL`, id); n != 1 {
		t.Errorf("dead letter not marked replayed")
	}
	// The event's trail shows its dead letter, replayed, and the grant the
	// replay made, at the position of the record that was dead-lettered.
	found, err := op.Search(ctx, nil, operate.SearchFilter{TenantID: f.tenantID, EventID: poisonID})
	if err != nil || len(found.Items) != 1 {
		t.Fatalf("search for %s: %v, %v", poisonID, found.Items, err)
	}
	trail, err := op.Trail(ctx, nil, found.Items[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(trail.DeadLetters) != 1 || trail.DeadLetters[0].ID != id || trail.DeadLetters[0].ReplayedAt == nil {
		t.Fatalf("trail's dead letters = %+v, want %d, replayed", trail.DeadLetters, id)
	}
	if len(trail.Effects) != 1 || !trail.Effects[0].ThisEvent || trail.Effects[0].Applied.Offset == nil ||
		*trail.Effects[0].Applied.Offset != trail.DeadLetters[0].Offset {
		t.Errorf("trail's effects = %+v, want the replay's grant at offset %d", trail.Effects, trail.DeadLetters[0].Offset)
	}
}

// `sluice replay` refuses a group with members, like kafka-consumer-groups.
func TestReplayRefusesAGroupWithActiveMembers(t *testing.T) {
	t.Parallel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	testenv.Eventually(t, time.Minute, "the credits group to be stable", func() (bool, error) {
		d, err := adm.DescribeGroups(context.Background(), suite.group)
		return err == nil && d[suite.group].State == "Stable", err
	})
	_, err = rewindGroup(context.Background(), adm, operate.Config{Topics: suite.topics, Groups: builtintest.Options(t, suite.topics)}, suite.group, offsets.Target{Earliest: true}, true)
	if !errors.Is(err, offsets.ErrGroupActive) {
		t.Fatalf("rewind of a running group: %v, want ErrGroupActive", err)
	}
}

// The CLI reaches dead letters as the API does: the list takes the API's
// filters (tenant, reason, time) and pages; dlq show prints one letter
// with its record (a payload read, audited) or, with --summary, without
// it; dlq count says what a filtered replay would take; dlq replay takes
// one letter or a filter, never neither, and replays only what it selects.
func TestDLQCommandsTakeTheAPIsFilters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := newTenant(t), newTenant(t)
	s := testenv.RandomSuffix()
	orphanA, orphanB := "cus_lost_a_"+s, "cus_lost_b_"+s
	bodyA := invoicePaid("evt_dl_a_"+s, "in_dl_a_"+s, orphanA, 1000)
	if code := a.sendSigned(t, bodyA); code/100 != 2 {
		t.Fatal(code)
	}
	if code := b.sendSigned(t, invoicePaid("evt_dl_b_"+s, "in_dl_b_"+s, orphanB, 1000)); code/100 != 2 {
		t.Fatal(code)
	}
	dlq := suite.topics.DeadLetter(suite.group)
	recordsFor(t, dlq, 2, "evt_dl_a_"+s, "evt_dl_b_"+s)
	var list struct {
		Items []operate.DeadLetter `json:"items"`
		Next  *string              `json:"next_cursor"`
	}
	runJSON(t, &list, "dlq", "list", "--tenant", a.tenantID, "--reason", "NO WORKSPACE", "--since", time.Now().Add(-time.Hour).Format(time.RFC3339))
	if len(list.Items) != 1 || list.Items[0].EventID != "evt_dl_a_"+s || list.Next == nil {
		t.Fatalf("dlq list --tenant --reason --since: %+v, want tenant a's one letter and a next_cursor", list)
	}
	id := list.Items[0].ID
	if n := runText(t, "dlq", "count", "--tenant", a.tenantID); strings.TrimSpace(n) != "1" {
		t.Errorf("dlq count --tenant: %q, want 1", n)
	}
	text := runText(t, "dlq", "show", fmt.Sprint(id))
	for _, want := range []string{"group:", suite.group, "customer maps to no workspace", "ce_id", "evt_dl_a_" + s, "payload: kept\n" + string(bodyA)} {
		if !strings.Contains(text, want) {
			t.Errorf("dlq show %d lacks %q:\n%s", id, want, text)
		}
	}
	if summary := runText(t, "dlq", "show", fmt.Sprint(id), "--summary"); strings.Contains(summary, "payload") {
		t.Errorf("dlq show --summary shows the record:\n%s", summary)
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE action = 'dead_letter.read_payload' AND target_id = $1 AND tenant_id = $2`, fmt.Sprint(id), a.tenantID); n != 1 {
		t.Errorf("audit rows of dlq show: %d, want 1 (the summary is no payload read)", n)
	}
	for _, args := range [][]string{{"dlq", "replay"}, {"dlq", "replay", "--id", fmt.Sprint(id), "--tenant", a.tenantID}} {
		if _, stderr, code := cli(t, args...); code != 2 || !strings.Contains(stderr, "--id") {
			t.Errorf("sluice %v: exit %d, %q; want a usage error asking for --id or a filter", args, code, stderr)
		}
	}
	for _, f := range []tenantFixture{a, b} {
		orphan := orphanA
		if f.tenantID == b.tenantID {
			orphan = orphanB
		}
		if _, err := suite.store.CreateWorkspace(ctx, f.tenantID, orphan, "found"); err != nil {
			t.Fatal(err)
		}
	}
	if out := runText(t, "dlq", "replay", "--tenant", a.tenantID, "--reason", "no workspace"); !strings.Contains(out, "replayed 1 dead letter(s)") {
		t.Errorf("dlq replay --tenant --reason: %q", out)
	}
	if n := count(t, `SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $1 AND replayed_at IS NULL`, b.tenantID); n != 1 {
		t.Errorf("tenant b's pending letters after tenant a's replay: %d, want 1", n)
	}
}
