package monitoring

import (
	"os"
	"strings"
	"testing"
)

// The assets live with Sluice's other deployment assets.
const (
	alertsFile    = "../../cmd/sluice/monitoring/alerts.yml"
	dashboardFile = "../../cmd/sluice/monitoring/dashboard.json"
	// scrapeEnv names the scrape of a running pipeline; make
	// monitoring-check writes it from the e2e suite first.
	scrapeEnv = "SLUICE_METRICS_SCRAPE"
)

// Every alert and every dashboard panel asks only for what a running
// Sluice exports, in expressions Prometheus parses.
func TestAlertsAndDashboardNameOnlyExportedMetrics(t *testing.T) {
	path := os.Getenv(scrapeEnv)
	if path == "" {
		t.Fatalf("%s names no scrape: run make monitoring-check, which writes one from a running pipeline", scrapeEnv)
	}
	exported, err := ReadScrape(path)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := RuleExprs(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	panels, err := DashboardExprs(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 || len(panels) == 0 {
		t.Fatalf("%d rules and %d panel queries: want some of each", len(rules), len(panels))
	}
	if err := Check(append(rules, panels...), exported); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rules and %d panel queries name only metrics among the %d the scrape holds", len(rules), len(panels), len(exported))
}

const scrape = `# TYPE a_seconds histogram
a_seconds_bucket{le="+Inf"} 1
a_seconds_sum 1
a_seconds_count 1
# TYPE b_total counter
b_total{kind="x"} 1
`

// The check refuses an expression that does not parse and a metric the
// scrape does not hold, wherever it hides in the expression.
func TestCheckRefusesWhatDoesNotParseOrIsNotExported(t *testing.T) {
	exported, err := Exported(strings.NewReader(scrape))
	if err != nil {
		t.Fatal(err)
	}
	good := `histogram_quantile(0.99, sum by (le) (rate(a_seconds_bucket{job="$job"}[$__rate_interval]))) / sum(rate(b_total[${__range}])) and on () vector(1)`
	if err := Check([]Expr{{"good", good}}, exported); err != nil {
		t.Fatalf("a good expression refused: %v", err)
	}
	for _, bad := range []string{
		`sum by (kind (rate(b_total[5m]))`,
		`rate(b_totl[5m])`,
		`a_seconds`, // a classic histogram has no series of that name
		`sum(b_total) / on (kind) group_left sum by (kind) (c_total)`,
		`{__name__="c_total"}`,
	} {
		if err := Check([]Expr{{"bad", bad}}, exported); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}

// A panel whose query was lost, nested in a row, is refused too.
func TestDashboardPanelsWithoutAQueryAreRefused(t *testing.T) {
	for _, d := range []string{
		`{"panels":[{"type":"row","panels":[{"type":"timeseries","title":"t","targets":[]}]}]}`,
		`{"panels":[{"type":"timeseries","title":"t","targets":[{"refId":"A","expr":" "}]}]}`,
	} {
		if _, err := DashboardExprs([]byte(d)); err == nil {
			t.Errorf("%s accepted", d)
		}
	}
	exprs, err := DashboardExprs([]byte(`{"panels":[{"type":"row","panels":[{"type":"timeseries","title":"t","targets":[{"refId":"A","expr":"b_total"}]}]}]}`))
	if err != nil || len(exprs) != 1 {
		t.Fatalf("nested panel: %v, %v", exprs, err)
	}
}
