package admin_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/envelope"
)

// seedPoison writes a dead letter of the subscriptions group that fails
// again when replayed: its subscription has no status.
func (b *bundle) seedPoison(t *testing.T, w world, reason string) string {
	t.Helper()
	ev := envelope.Event{ID: "evt_poison", Source: envelope.SourceURI(w.tenant, w.source), Type: "stripe.customer.subscription.updated",
		TenantID: w.tenant, SourceAccount: "acct_x", PartitionKey: "k", InboxID: w.inboxID}
	body := `{"created":1700000000,"data":{"object":{"id":"sub_poison","customer":"cus_1"}}}`
	var id int64
	err := b.pool.QueryRow(t.Context(), `
		INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload, reason, attempts,
		                          first_failed_at, last_failed_at)
		VALUES ($1, $1, 0, nextval('inbox_id_seq'), 'k', $2, $3, $4, 3, now(), now())
		RETURNING id`, topics.Resource("subscriptions"), ev.Headers(), []byte(body), reason).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

// A dead letter that fails again when replayed is answered 422 with the
// reason and its id (failed_id), not 500: alone, and in a filtered replay,
// which names the letters it replayed before it; the failed letter stays
// pending and the replayed one is marked.
func TestAReplayThatFailsAgainSaysWhy(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	poison := b.seedPoison(t, w, "poison-alone")
	status, got := b.do(t, tok, http.MethodPost, "/admin/v1/dead-letters/"+poison+"/replay", nil)
	p := decode[struct {
		Detail   string  `json:"detail"`
		FailedID int64   `json:"failed_id"`
		Replayed []int64 `json:"replayed"`
	}](t, got)
	if status != http.StatusUnprocessableEntity || !strings.Contains(p.Detail, "has no status") || strconv.FormatInt(p.FailedID, 10) != poison {
		t.Errorf("replay of a poison letter: %d %s, want 422 with the reason and failed_id %s", status, got, poison)
	}
	// The filtered replay: the world's set letter (older) replays, then the
	// poison stops it.
	if _, err := b.pool.Exec(t.Context(), `UPDATE dead_letters SET reason = 'walk-set poison' WHERE id = $1`, poison); err != nil {
		t.Fatal(err)
	}
	status, got = b.do(t, tok, http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"reason": walkSetReason})
	p = decode[struct {
		Detail   string  `json:"detail"`
		FailedID int64   `json:"failed_id"`
		Replayed []int64 `json:"replayed"`
	}](t, got)
	if status != http.StatusUnprocessableEntity || !strings.Contains(p.Detail, "has no status") || strconv.FormatInt(p.FailedID, 10) != poison ||
		fmt.Sprint(p.Replayed) != "["+w.setLetter+"]" {
		t.Errorf("filtered replay stopped by a poison letter: %d %s, want 422, failed_id %s, replayed [%s]", status, got, poison, w.setLetter)
	}
	if n := b.count(t, `SELECT count(*) FROM dead_letters WHERE id = $1 AND replayed_at IS NULL`, poison); n != 1 {
		t.Error("the poison letter is no longer pending")
	}
	if n := b.count(t, `SELECT count(*) FROM dead_letters WHERE id = $1 AND replayed_at IS NOT NULL`, w.setLetter); n != 1 {
		t.Error("the letter replayed before the poison is not marked")
	}
}
