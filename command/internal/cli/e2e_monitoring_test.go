package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// scrapeFileEnv names the file TestScrapeForTheMonitoringCheck writes the
// scrape to; dev/monitoring checks the alerts and the dashboard against it
// (make monitoring-check sets it).
const scrapeFileEnv = "SLUICE_METRICS_SCRAPE"

// The alerts and the dashboard in cmd/sluice/monitoring may name only
// metrics a running Sluice exports. This test brings every family the
// pipeline registers into existence (labelled families appear with their
// first sample: an accepted webhook, a refused one, a dead letter, a
// dispatched e-mail, a record set aside) and hands the scrape to dev/monitoring's check.
func TestScrapeForTheMonitoringCheck(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	if code := f.sendSigned(t, invoicePaid("evt_mon_"+s, "in_mon_"+s, f.customer, 1000)); code != http.StatusAccepted {
		t.Fatalf("signed webhook: status %d", code)
	}
	if code := f.post(t, invoicePaid("evt_mon_bad_"+s, "in_mon_bad_"+s, f.customer, 1000), "t=1,v1=00"); code != http.StatusUnauthorized {
		t.Fatalf("badly signed webhook: status %d", code)
	}
	// No workspace maps this customer: a permanent error, so a dead letter.
	if code := f.sendSigned(t, invoicePaid("evt_mon_orphan_"+s, "in_mon_orphan_"+s, "cus_mon_orphan_"+s, 1000)); code != http.StatusAccepted {
		t.Fatalf("orphan webhook: status %d", code)
	}
	testenv.Eventually(t, time.Minute, "the first grant", func() (bool, error) { return f.grants(t) == 1, nil })
	// A second invoice while the workspace's balance row is locked
	// elsewhere: its record is set aside until the lock ends.
	ctx := context.Background()
	lock, err := suite.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx) //nolint:errcheck // the lock ends with it
	if _, err := lock.Exec(ctx, `SELECT credits FROM balances WHERE workspace_id = $1 FOR UPDATE`, f.workspaceID); err != nil {
		t.Fatal(err)
	}
	if code := f.sendSigned(t, invoicePaid("evt_mon_locked_"+s, "in_mon_locked_"+s, f.customer, 1000)); code != http.StatusAccepted {
		t.Fatalf("second webhook: status %d", code)
	}
	var body []byte
	testenv.Eventually(t, time.Minute, "the grant, its e-mail, the dead letter and the record set aside to show on /metrics", func() (bool, error) {
		// The scrape checked is the scrape written: a metric that shows
		// between two scrapes passed the check without reaching the file.
		body = scrapeText(t)
		m := samples(body)
		// The relay streams from its slot: Postgres says so.
		// The grant's confirmation e-mail reached the dispatcher's service,
		// sent by the deliverer.
		for _, series := range []string{"sluice_consumer_records_applied_total", "sluice_dead_letters_pending", "sluice_ingest_requests_total",
			"sluice_cdc_slot_active", "sluice_delivery_attempts_total", "sluice_consumer_records_waiting", "sluice_consumer_oldest_waiting_seconds"} {
			if v, ok := m(series); !ok || v == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the record set aside to be granted once the lock ended", func() (bool, error) { return f.grants(t) == 2, nil })
	path := os.Getenv(scrapeFileEnv)
	if path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, body, 0o644); err != nil {
		t.Fatal(err)
	}
}
