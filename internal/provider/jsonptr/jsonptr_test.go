package jsonptr_test

import (
	"testing"

	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/provider/jsonptr"
)

func TestGetFollowsRFC6901(t *testing.T) {
	var doc any
	if _, err := json.Parse([]byte(`{"a":{"b":"ab","":"empty"},"a/b":"slash","m~n":"tilde","~1":"literal","arr":["x",{"y":"arr1y"}],"":"root-empty","n":42}`), &doc, json.UseNumber); err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string]string{
		"/a/b": "ab", "/a/": "empty", "/a~1b": "slash", "/m~0n": "tilde", "/~01": "literal",
		"/arr/0": "x", "/arr/1/y": "arr1y", "/": "root-empty", "/n": "42",
	} {
		if got, ok := jsonptr.String(doc, ptr); !ok || got != want {
			t.Errorf("%q: got %q %v, want %q", ptr, got, ok, want)
		}
	}
	for _, ptr := range []string{"a", "/nope", "/a/b/c", "/arr/2", "/arr/-1", "/arr/x", "/a~2b"} {
		if v, ok := jsonptr.Get(doc, ptr); ok {
			t.Errorf("%q: got %v, want nothing", ptr, v)
		}
	}
	if v, ok := jsonptr.Get(doc, ""); !ok || v == nil {
		t.Errorf("the empty pointer is the whole document")
	}
}
