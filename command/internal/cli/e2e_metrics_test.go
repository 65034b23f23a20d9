package cli

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// metricsURL is where the suite's pipeline serves Prometheus metrics: every
// scrape in the tests, and so the monitoring check's, reads it from here.
func metricsURL() string { return suite.adminURL + "/metrics" }

// scrapeText reads the pipeline's /metrics in the text exposition format.
func scrapeText(t *testing.T) []byte {
	t.Helper()
	resp, err := http.Get(metricsURL())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", metricsURL(), resp.StatusCode)
	}
	return body
}

// scrape reads the pipeline's /metrics and returns a func summing the
// samples of a metric whose labels contain every given label="value".
func scrape(t *testing.T) func(name string, labels ...string) (float64, bool) {
	t.Helper()
	return samples(scrapeText(t))
}

// samples returns a func summing, in the scrape body, the samples of a
// metric whose labels contain every given label="value".
func samples(body []byte) func(name string, labels ...string) (float64, bool) {
	lines := strings.Split(string(body), "\n")
	return func(name string, labels ...string) (float64, bool) {
		var sum float64
		found := false
	line:
		for _, l := range lines {
			if !strings.HasPrefix(l, name+"{") && !strings.HasPrefix(l, name+" ") {
				continue
			}
			for _, lv := range labels {
				if !strings.Contains(l, lv) {
					continue line
				}
			}
			v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			if err == nil {
				sum, found = sum+v, true
			}
		}
		return sum, found
	}
}

// What an on-call watches is on /metrics, consistent with what was sent:
// requests by kind and status, consumer lag per group and partition (back
// to zero once the load is applied), the connection pool, the build.
func TestMetricsAnOnCallNeedsAreExported(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	invoices := `topic="` + suite.topics.Resource("invoices") + `"`
	m := scrape(t)
	before, _ := m("sluice_ingest_requests_total", `kind="stripe"`, `code="202"`)
	producedBefore, _ := m("sluice_kafka_produce_records_total", `client="relay"`, invoices)
	fetchedBefore, _ := m("sluice_kafka_fetch_records_total", `client="`+suite.group+`"`, invoices)
	const n = 8
	for i := range n {
		if status := f.sendSigned(t, invoicePaid(fmt.Sprintf("evt_metrics_%s_%d", f.customer, i), fmt.Sprintf("in_metrics_%s_%d", f.customer, i), f.customer, 1000)); status != http.StatusAccepted {
			t.Fatalf("status %d", status)
		}
	}
	if after, _ := scrape(t)("sluice_ingest_requests_total", `kind="stripe"`, `code="202"`); after-before < n {
		t.Errorf("stripe 202s counted %v more, want at least %d", after-before, n)
	}
	testenv.Eventually(t, time.Minute, "the invoices to be granted", func() (bool, error) {
		return f.balance(t) == n*100, nil
	})
	testenv.Eventually(t, time.Minute, "the credits group's lag to return to zero", func() (bool, error) {
		lag, ok := scrape(t)("sluice_consumer_lag_records", `group="`+suite.group+`"`)
		if !ok {
			return false, fmt.Errorf("no sluice_consumer_lag_records for %s", suite.group)
		}
		if lag != 0 {
			return false, fmt.Errorf("lag %v", lag)
		}
		return true, nil
	})
	m = scrape(t)
	for _, series := range []string{"sluice_pg_pool_connections", "sluice_pg_pool_max_connections", "go_build_info", "sluice_cdc_slot_lag_bytes"} {
		if _, ok := m(series); !ok {
			t.Errorf("%s is not exported", series)
		}
	}
	// The Kafka clients' own metrics (kprom), one client label each: the
	// relay produced the invoices, the credits group fetched them.
	if produced, _ := m("sluice_kafka_produce_records_total", `client="relay"`, invoices); produced-producedBefore < n {
		t.Errorf("the relay's produced invoices rose by %v, want at least %d", produced-producedBefore, n)
	}
	if fetched, _ := m("sluice_kafka_fetch_records_total", `client="`+suite.group+`"`, invoices); fetched-fetchedBefore < n {
		t.Errorf("the credits group's fetched invoices rose by %v, want at least %d", fetched-fetchedBefore, n)
	}
	if _, ok := m("sluice_kafka_connects_total", `client="admin"`); !ok {
		t.Error("the admin client's sluice_kafka_connects_total is not exported")
	}
}

// The public port is what providers reach: it answers webhooks and the
// load balancer's probes, and reveals nothing an operator reads.
func TestPublicPortServesNoOperatorRoutes(t *testing.T) {
	for _, path := range []string{"/metrics", "/debug/pprof/", "/readyz/stages"} {
		resp, err := http.Get(suite.baseURL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("public %s: %d, want 404", path, resp.StatusCode)
		}
	}
	// Readiness may be 503 while another test holds a secret the key ring
	// cannot open; what matters here is who serves what.
	for _, url := range []string{suite.baseURL + "/readyz", suite.adminURL + "/readyz", metricsURL()} {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			t.Errorf("%s: 404, want it served", url)
		}
	}
}
