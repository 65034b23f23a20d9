package reconcile_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A verification left pending past the provider's retry window has its
// state fetched through the source's configured lookup and entered as the
// event that state stands for, with a synthetic id derived from the object
// and its version: fetching it again is a duplicate, not a second event.
func TestStuckVerificationIsFetchedAndEnteredOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	v := b.stuckVerification(t)
	source, stuck, decided, calls := v.source, v.stuck, v.decided, &v.calls

	rep, err := b.runner.Source(ctx, source, provider.Window{Since: time.Now().Add(-48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrections[reconcile.OutcomeRecovered] != 1 || calls.Load() != 1 {
		t.Fatalf("report %+v after %d lookups, want one recovered from one lookup (the fresh one is not a candidate)", rep, calls.Load())
	}
	var typ, objectID string
	var eventTime time.Time
	if err := b.pool.QueryRow(ctx, `SELECT i.event_type, i.object_id, i.event_time FROM inbox i JOIN outbox o ON o.inbox_id = i.id
		WHERE i.source_id = $1 AND i.event_id LIKE 'sluice_reconcile_%' AND o.headers->>'sluice_recovered' = 'true'`, source).Scan(&typ, &objectID, &eventTime); err != nil {
		t.Fatalf("recovered event: %v", err)
	}
	if typ != "verification.approved" || objectID != stuck || !eventTime.Equal(decided) {
		t.Fatalf("recovered %s of %s at %s, want verification.approved of %s at its version %s", typ, objectID, eventTime, stuck, decided)
	}

	again, err := b.runner.Source(ctx, source, provider.Window{Since: time.Now().Add(-48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if again.Corrected() != 0 {
		t.Fatalf("fetching the same state again corrected %+v, want a duplicate", again.Corrections)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, source); n != 1 {
		t.Fatalf("inbox rows = %d, want 1", n)
	}
}

// stuckVerifications is a verification source with one verification
// pending for 30 hours (past the provider's retry window) and one for a
// minute, as the verifications group's projection holds them, and the
// provider's lookup, which says both were approved at decided.
type stuckVerifications struct {
	source, stuck string
	decided       time.Time
	calls         atomic.Int32
}

func (b *testBundle) stuckVerification(t *testing.T) *stuckVerifications {
	t.Helper()
	ctx := context.Background()
	v := &stuckVerifications{decided: time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)}
	lookup := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.calls.Add(1)
		if r.Header.Get("Authorization") != "Bearer idv_key" {
			http.Error(w, "unauthorised", http.StatusUnauthorized)
			return
		}
		id := strings.TrimPrefix(r.URL.Path, "/v1/verifications/")
		fmt.Fprintf(w, `{"verification":{"id":%q,"status":"approved","updated_at":%q}}`, id, v.decided.Format(time.RFC3339))
	}))
	t.Cleanup(lookup.Close)

	tenant, _ := b.store.CreateTenant(ctx, t.Name())
	var err error
	v.source, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "standard_webhooks", Account: "idv_" + testenv.RandomSuffix(),
		Secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.SetAPICredentials(ctx, v.source, fmt.Appendf(nil, `{"object_url":"%s/v1/verifications/{id}","auth_header":"Authorization",
		"auth_value":"Bearer idv_key","event_type":"verification.{state}","object_pointer":"/verification","state_pointer":"/status","version_pointer":"/updated_at"}`, lookup.URL)); err != nil {
		t.Fatal(err)
	}
	v.stuck = "ver_stuck_" + testenv.RandomSuffix()
	fresh := "ver_fresh_" + testenv.RandomSuffix()
	for id, at := range map[string]time.Time{v.stuck: time.Now().Add(-30 * time.Hour), fresh: time.Now().Add(-time.Minute)} {
		if _, err := b.pool.Exec(ctx, `INSERT INTO verifications (source_id, source_account, verification_id, tenant_id, status, final, version_time, version_event_id)
			SELECT id, account, $2, tenant_id, 'pending', false, $3, 'evt_pending' FROM sources WHERE id = $1`, v.source, id, at); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

// A deployment that does not run the verifications group never looks up
// the verifications its table holds in doubt (nor reads that table): the
// stuck verification is not fetched, and the run still succeeds.
func TestAStateLookupIsAskedOnlyWhenItsGroupRuns(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	v := b.stuckVerification(t)
	without := reconcile.New(reconcile.Config{EffectGroups: []string{"credits", "feedback"}}, slog.New(slog.DiscardHandler), b.store, kinds.Builtin(), b.svc,
		reconcile.NewMetrics(prometheus.NewRegistry()))
	rep, err := without.Source(ctx, v.source, provider.Window{Since: time.Now().Add(-48 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != reconcile.OutcomeOK || rep.Corrected() != 0 || v.calls.Load() != 0 {
		t.Fatalf("without the verifications group: %s, %+v after %d lookups; want a run that looks nothing up", rep.Outcome, rep.Corrections, v.calls.Load())
	}
	if !reconcile.ReadsGroup("verifications") || reconcile.ReadsGroup("credits") {
		t.Error("reconciliation reads the verifications group's table, and not the credits group's")
	}
}
