package endpoints_test

import (
	"testing"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// An index compiles each expression text once and the next read of the
// same endpoints reuses the programs; a changed text is compiled anew, and
// one that does not compile takes nothing and is named.
func TestIndexCompilesEachExpressionOnce(t *testing.T) {
	t.Parallel()
	subs := []endpoints.Subscription{
		{EndpointID: "a", TenantID: "t", Filters: []string{"*"}, Expression: `type == "x.y"`},
		{EndpointID: "b", TenantID: "t", Filters: []string{"*"}, Expression: `type == "x.y"`},
		{EndpointID: "c", TenantID: "t", Filters: []string{"x.*"}},
		{EndpointID: "d", TenantID: "t", Filters: []string{"*"}, Expression: `nosuch(type)`},
		{EndpointID: "e", TenantID: "u", Filters: []string{"*"}},
	}
	first := endpoints.NewIndex(subs, nil)
	got := first.Match(nil, "t", "x.y")
	if len(got) != 3 || got[0].Program == nil || got[0].Program != got[1].Program || got[2].Program != nil {
		t.Fatalf("first: %+v, want a and b sharing one program, c with none, d left out", got)
	}
	if len(first.Unusable) != 1 {
		t.Errorf("unusable: %v, want d's", first.Unusable)
	}
	subs[1].Expression = `type == "x.z"`
	second := endpoints.NewIndex(subs, first)
	again := second.Match(nil, "t", "x.y")
	if again[0].Program != got[0].Program || again[1].Program == got[0].Program || again[1].Program.String() != `type == "x.z"` {
		t.Errorf("second: a's program not reused, or b's changed text not compiled: %+v", again)
	}
	if !second.Any("t", "x.y") {
		t.Error("Any judges by type")
	}
}
