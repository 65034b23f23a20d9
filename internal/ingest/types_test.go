package ingest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// A tenant's type whose resource type has no topic in this instance (its
// vocabulary differs from the one the type was declared under) cannot be
// published here: its events are quarantined with the reason, so a release
// can publish them once the instance is configured, and none reaches a topic
// the relay would stall on. A type of another kind under the same name is
// none of this one's.
func TestTenantTypeWithoutATopicHereIsQuarantinedWithTheReason(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pg.Connect(ctx, dbURL, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	narrow, err := catalog.New(pool, catalog.Config{ResourceTypes: []string{"order"}, Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	b := setup(t, ingest.Config{TenantTypes: narrow})
	wide, err := catalog.New(pool, catalog.Config{ResourceTypes: []string{"order", "ticket"}, Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wide.Create(ctx, catalog.Spec{TenantID: b.tenantID, Kind: "stripe", Type: "customer.created", ResourceType: "ticket",
		Schema: []byte(`{"type":"object"}`)}); err != nil {
		t.Fatal(err)
	}
	body := fmt.Appendf(nil, `{"id":"evt_cust_1","object":"event","type":"customer.created","created":%d,"data":{"object":{"id":"cus_9","object":"customer"}}}`, time.Now().Unix())
	if got := b.send(t, body, nil); got != http.StatusAccepted {
		t.Fatalf("status %d", got)
	}
	var status, reason string
	if err := b.pool.QueryRow(ctx, `SELECT status, reason FROM inbox WHERE tenant_id = $1 AND event_id = 'evt_cust_1'`, b.tenantID).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != "quarantined" || !strings.Contains(reason, `"ticket" has no topic`) {
		t.Fatalf("%s %q, want quarantined for want of a topic", status, reason)
	}
	if n := b.count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1`); n != 0 {
		t.Fatalf("%d records published", n)
	}
}
