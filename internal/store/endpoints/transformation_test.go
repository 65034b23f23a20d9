package endpoints_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Each change of the filter expression or the transformation is the rules'
// next version, kept with what it held; a change of anything else, or a
// patch setting a rule to what it is, is not. The deliverer and the
// fan-out read the version with the rules.
func TestAnEditOfTheRulesIsTheirNextVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, endpoints.Limits{})
	e, _ := create(t, s, endpoints.New{TenantID: newTenant(t), Expression: `type == "a"`})
	if e.RulesVersion != 1 {
		t.Fatalf("created at version %d", e.RulesVersion)
	}
	desc, expr, same, tr, none := "changed", `type == "b"`, `type == "b"`, `{"t": type}`, ""
	for _, step := range []struct {
		patch endpoints.Patch
		want  int64
	}{
		{endpoints.Patch{Description: &desc}, 1},
		{endpoints.Patch{Expression: &expr}, 2},
		{endpoints.Patch{Expression: &same}, 2},
		{endpoints.Patch{Transformation: &tr}, 3},
		{endpoints.Patch{Transformation: &none, Expression: &none}, 4},
	} {
		got, err := s.UpdateEndpoint(ctx, e.ID, step.patch)
		if err != nil {
			t.Fatal(err)
		}
		if got.RulesVersion != step.want {
			t.Errorf("after %+v: version %d, want %d", step.patch, got.RulesVersion, step.want)
		}
	}
	rows, err := pool.Query(ctx, `SELECT version, coalesce(filter_expression, '-') || ' ' || coalesce(transformation, '-')
FROM endpoint_rule_versions WHERE endpoint_id = $1 ORDER BY version`, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for rows.Next() {
		var (
			v     int64
			rules string
		)
		if err := rows.Scan(&v, &rules); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, rules)
	}
	want := []string{`type == "a" -`, `type == "b" -`, `type == "b" {"t": type}`, `- -`}
	if strings.Join(kept, "|") != strings.Join(want, "|") {
		t.Errorf("versions kept %q, want %q", kept, want)
	}
	tg, ok := target(t, s, e.ID)
	if !ok || tg.RulesVersion != 4 || tg.Transformation != "" {
		t.Errorf("target %v at version %d with transformation %q, want version 4 and none", ok, tg.RulesVersion, tg.Transformation)
	}
}

// A transformation is refused when it does not compile, yields no map, or
// fails over its sample, and a sample without a transformation or one
// that is not JSON is refused too; a tenant with no event of the
// endpoint's types gets it only checked.
func TestATransformationIsCheckedAndTriedWhenSet(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	tenant := newTenant(t)
	for _, c := range []struct {
		n    endpoints.New
		says string
	}{
		{endpoints.New{Transformation: `{"a": nope}`}, "undeclared reference to 'nope'"},
		{endpoints.New{Transformation: `"text"`}, "not a map"},
		{endpoints.New{Transformation: `{"a": data.x}`, TransformationSample: []byte(`{"data":{}}`)}, "over the sample"},
		{endpoints.New{Transformation: `{"a": 1}`, TransformationSample: []byte(`{"data":`)}, "not JSON"},
		{endpoints.New{TransformationSample: []byte(`{}`)}, "set one with it"},
	} {
		c.n.TenantID, c.n.URL, c.n.Filters = tenant, "https://receiver.example/hooks", []string{"*"}
		_, _, err := s.CreateEndpoint(context.Background(), c.n)
		if !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q with sample %q: %v, want an invalid refusal saying %q", c.n.Transformation, c.n.TransformationSample, err, c.says)
		}
	}
	e, _ := create(t, s, endpoints.New{TenantID: tenant, Transformation: `{"a": data.x}`})
	if e.Trial == nil || e.Trial.On != endpoints.TriedOnNone || e.Transformation != `{"a": data.x}` {
		t.Errorf("trial %+v, transformation %q: want only checked (the tenant has no event)", e.Trial, e.Transformation)
	}
}
