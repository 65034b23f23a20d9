package monitoring

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Expr is one PromQL expression and where it was found.
type Expr struct {
	Where, Query string
}

// Exported reads a scrape in the text exposition format and returns the
// names a query can select: the series names each family's samples carry
// (a histogram's _bucket, _sum and _count).
func Exported(r io.Reader) (map[string]bool, error) {
	families, err := textParser(r)
	if err != nil {
		return nil, fmt.Errorf("read scrape: %w", err)
	}
	names := map[string]bool{}
	for name, f := range families {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			// A classic histogram has no series under its own name.
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	if len(names) == 0 {
		return nil, errors.New("read scrape: no metric family in it")
	}
	return names, nil
}

// DashboardExprs returns the query of every target of every panel of a
// Grafana dashboard, rows' panels included.
func DashboardExprs(data []byte) ([]Expr, error) {
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("read dashboard: %w", err)
	}
	var out []Expr
	var walk func([]panel) error
	walk = func(ps []panel) error {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				return fmt.Errorf("panel %q has no query", p.Title)
			}
			for _, t := range p.Targets {
				if strings.TrimSpace(t.Expr) == "" {
					return fmt.Errorf("panel %q, target %s: no expression", p.Title, t.RefID)
				}
				out = append(out, Expr{Where: fmt.Sprintf("panel %q, target %s", p.Title, t.RefID), Query: t.Expr})
			}
			if err := walk(p.Panels); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	return out, nil
}

type panel struct {
	Type, Title string
	Targets     []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// RuleExprs returns the expression of every rule of a Prometheus rule
// file; the file must pass Prometheus's own validation.
func RuleExprs(path string) ([]Expr, error) {
	groups, errs := rulefmt.ParseFile(path, false, model.UTF8Validation, newParser(), slog.New(slog.DiscardHandler))
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []Expr
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			out = append(out, Expr{Where: fmt.Sprintf("group %s, rule %s%s", g.Name, r.Alert, r.Record), Query: r.Expr})
		}
	}
	return out, nil
}

func newParser() parser.Parser { return parser.NewParser(parser.Options{}) }

// grafanaVars are the dashboard's variables ($name or ${name}), replaced
// by a value of their kind before parsing, as Grafana does before it
// sends a query.
var grafanaVars = regexp.MustCompile(`\$\{?(\w+)\}?`)

func substitute(q string) string {
	return grafanaVars.ReplaceAllStringFunc(q, func(v string) string {
		switch strings.Trim(v, "${}") {
		case "__rate_interval", "__interval", "__range":
			return "5m"
		}
		return "sluice"
	})
}

// Check parses each expression and returns one error per expression that
// does not parse or names a metric missing from exported.
func Check(exprs []Expr, exported map[string]bool) error {
	p := newParser()
	var errs []error
	for _, e := range exprs {
		ast, err := p.ParseExpr(substitute(e.Query))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q does not parse: %w", e.Where, e.Query, err))
			continue
		}
		for _, name := range metricNames(ast) {
			if !exported[name] {
				errs = append(errs, fmt.Errorf("%s: %s is not exported by Sluice (not in the scrape)", e.Where, name))
			}
		}
	}
	return errors.Join(errs...)
}

// metricNames are the metric names an expression selects; a selector
// without one (only labels) names none.
func metricNames(ast parser.Expr) []string {
	var names []string
	parser.Inspect(ast, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		for _, m := range vs.LabelMatchers {
			if m.Name == labels.MetricName && m.Type == labels.MatchEqual && !slices.Contains(names, m.Value) {
				names = append(names, m.Value)
			}
		}
		return nil
	})
	return names
}

// ReadScrape opens the scrape file and returns its exported names.
func ReadScrape(path string) (map[string]bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Exported(f)
}

func textParser(r io.Reader) (map[string]*dto.MetricFamily, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(r)
}
