package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/testenv"
)

// "Why didn't I get my credits?" answered from the command line alone: the
// invoice is found by its object id; its trail shows no grant and the dead
// letter that says why; its payload is the body sent, byte for byte, and
// the read is audited; a changed redelivery is a conflict holding both
// contents; the relay's slot streams.
func TestWhyNoCreditsIsAnsweredByTheCLI(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	eventID, invoiceID := "evt_why_"+s, "in_why_"+s
	body := invoicePaid(eventID, invoiceID, "cus_unmapped_"+s, 1000)
	if code := f.sendSigned(t, body); code/100 != 2 {
		t.Fatalf("invoice: status %d", code)
	}
	recordsFor(t, suite.topics.DeadLetter(suite.group), 1, eventID)

	var found struct{ Items []operate.Event }
	runJSON(t, &found, "events", "search", "--tenant", f.tenantID, "--object-id", invoiceID)
	if len(found.Items) != 1 || found.Items[0].EventID != eventID {
		t.Fatalf("events search --object-id %s: %+v, want the one event", invoiceID, found.Items)
	}
	id := fmt.Sprint(found.Items[0].ID)
	if stdout := runText(t, "events", "search", "--event-id", eventID); !strings.Contains(stdout, id+" ") || !strings.Contains(stdout, "invoice.paid") {
		t.Errorf("events search --event-id:\n%s", stdout)
	}

	var trail operate.Trail
	runJSON(t, &trail, "events", "trail", id)
	if len(trail.Effects) != 0 || len(trail.DeadLetters) != 1 || !strings.Contains(trail.DeadLetters[0].Reason, "customer maps to no workspace") {
		t.Fatalf("trail: effects %+v, dead letters %+v; want no grant and the dead letter saying why", trail.Effects, trail.DeadLetters)
	}
	text := runText(t, "events", "trail", id)
	for _, want := range []string{"event " + id, "event id:     " + eventID, "effects on its object: none", "dead letters:", "customer maps to no workspace"} {
		if !strings.Contains(text, want) {
			t.Errorf("events trail %s does not say %q:\n%s", id, want, text)
		}
	}

	if raw := runText(t, "events", "payload", id); raw != string(body) {
		t.Errorf("events payload printed %q, want the body sent, %q", raw, body)
	}
	var p operate.Payload
	runJSON(t, &p, "events", "payload", id)
	if p.State != operate.PayloadKept || !bytes.Equal(p.Body, body) {
		t.Errorf("events payload -o json: %+v", p)
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE token_id IS NULL AND action = 'event.read_payload' AND target_id = $1 AND tenant_id = $2`, id, f.tenantID); n != 2 {
		t.Errorf("audit rows of the two payload reads: %d, want 2", n)
	}
	var entries struct {
		Items []struct {
			Action   string `json:"action"`
			TargetID string `json:"target_id"`
		} `json:"items"`
	}
	runJSON(t, &entries, "audit", "list", "--tenant", f.tenantID)
	if len(entries.Items) != 2 || entries.Items[0].Action != "event.read_payload" || entries.Items[0].TargetID != id {
		t.Errorf("audit list --tenant: %+v, want the two payload reads", entries.Items)
	}
	if text := runText(t, "audit", "list", "--tenant", f.tenantID, "--limit", "1"); !strings.Contains(text, "(cli)") || !strings.Contains(text, "more: --cursor ") {
		t.Errorf("audit list --limit 1:\n%s", text)
	}

	// Stripe's copies of one event differ by what identifies it (its
	// creation time here), not by any field of the body.
	changed := bytes.Replace(body, []byte(`"created":`), []byte(`"created":1`), 1)
	if code := f.sendSigned(t, changed); code/100 != 2 {
		t.Fatalf("changed redelivery: status %d", code)
	}
	var conflicts struct{ Items []operate.Conflict }
	runJSON(t, &conflicts, "conflicts", "list", "--tenant", f.tenantID)
	if len(conflicts.Items) != 1 || conflicts.Items[0].EventID != eventID {
		t.Fatalf("conflicts list: %+v, want the changed redelivery", conflicts.Items)
	}
	var detail operate.ConflictDetail
	runJSON(t, &detail, "conflicts", "get", conflicts.Items[0].ID)
	if !bytes.Equal(detail.Original.Body, body) || !bytes.Equal(detail.Newcomer.Body, changed) {
		t.Errorf("conflicts get: original %q, newcomer %q", detail.Original.Body, detail.Newcomer.Body)
	}
	if text := runText(t, "conflicts", "get", conflicts.Items[0].ID); !strings.Contains(text, "original (stands): kept\n"+string(body)) {
		t.Errorf("conflicts get:\n%s", text)
	}

	var slot struct{ Exists, Active bool }
	runJSON(t, &slot, "cdc", "slot", "--slot", suite.slot)
	if !slot.Exists || !slot.Active {
		t.Errorf("cdc slot --slot %s: %+v, want it streaming", suite.slot, slot)
	}
	if text := runText(t, "cdc", "slot", "--slot", suite.slot); !strings.Contains(text, "active:         yes") {
		t.Errorf("cdc slot:\n%s", text)
	}
}

// runText runs a command that must succeed and returns its stdout.
func runText(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, code := cli(t, args...)
	if code != 0 {
		t.Fatalf("sluice %v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// runJSON runs a command with -o json that must succeed and decodes what it
// printed into v.
func runJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	stdout := runText(t, append(args, "-o", "json")...)
	if err := json.Unmarshal([]byte(stdout), v); err != nil {
		t.Fatalf("sluice %v -o json: %v: %s", args, err, stdout)
	}
}

// `events trail` and `events payload` take the provider's event id, what a
// person has in hand first; when two sources delivered an event by that id
// the command names both and asks for the source (or the inbox id).
func TestEventsTrailTakesTheProvidersEventID(t *testing.T) {
	t.Parallel()
	a, b := newTenant(t), newTenant(t)
	s := testenv.RandomSuffix()
	shared, own := "evt_shared_"+s, "evt_own_"+s
	bodyA := invoicePaid(shared, "in_a_"+s, a.customer, 1000)
	for _, send := range []struct {
		f    tenantFixture
		body []byte
	}{{a, bodyA}, {b, invoicePaid(shared, "in_b_"+s, b.customer, 1000)}, {a, invoicePaid(own, "in_own_"+s, a.customer, 1000)}} {
		if code := send.f.sendSigned(t, send.body); code/100 != 2 {
			t.Fatalf("send: status %d", code)
		}
	}
	var trail operate.Trail
	runJSON(t, &trail, "events", "trail", own)
	if trail.Event.EventID != own || trail.Event.SourceID != a.sourceID {
		t.Errorf("events trail %s: %+v", own, trail.Event)
	}
	_, stderr, code := cli(t, "events", "trail", shared)
	if code != 1 || !strings.Contains(stderr, "2 events have the event id "+shared) || !strings.Contains(stderr, "--source") ||
		!strings.Contains(stderr, "source "+a.sourceID) || !strings.Contains(stderr, "source "+b.sourceID) {
		t.Errorf("events trail %s (two sources): exit %d, %q; want both named and --source asked for", shared, code, stderr)
	}
	runJSON(t, &trail, "events", "trail", shared, "--source", b.sourceID)
	if trail.Event.TenantID != b.tenantID {
		t.Errorf("events trail %s --source %s: %+v", shared, b.sourceID, trail.Event)
	}
	if raw := runText(t, "events", "payload", shared, "--source", a.sourceID); raw != string(bodyA) {
		t.Errorf("events payload %s --source: %q", shared, raw)
	}
	runJSON(t, &trail, "events", "trail", fmt.Sprint(trail.Event.ID)) // the inbox id still names it
	if trail.Event.TenantID != b.tenantID {
		t.Errorf("events trail <inbox id>: %+v", trail.Event)
	}
	if _, stderr, code := cli(t, "events", "trail", "evt_none_"+s); code != 1 || !strings.Contains(stderr, "no event evt_none_"+s) {
		t.Errorf("events trail of an unknown id: exit %d, %q", code, stderr)
	}
}
