package ingest

import (
	"bytes"
	"testing"
)

// jsonSum is sameJSON kept as a hash: two bodies have the same sum exactly
// when sameJSON says they hold the same JSON, so a redelivery is judged by
// one rule whether the stored body is still there or not.
func TestJSONSumAgreesWithSameJSON(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ a, b string }{
		{`{"a":1,"b":[1,2]}`, `{ "b" : [1, 2], "a" : 1 }`}, // whitespace, key order
		{`{"a":1}`, `{"a":1.0}`},                           // numbers as written
		{`{"a":[1,2]}`, `{"a":[2,1]}`},                     // array order
		{`{"a":"x"}`, `{"a":"\u0078"}`},                    // escapes
		{`{"a":null}`, `{}`},                               // null is not absent
		{`{"a":{"b":1}}`, `{"a":{"b":1},"c":false}`},       // extra member
		{`{"ab":"c"}`, `{"a":"bc"}`},                       // boundaries between key and value
		{`["a","b"]`, `["ab"]`},                            // boundaries between elements
		{`{"a":true}`, `{"a":"true"}`},
		{`{"a":1}`, `{"a":"1"}`},     // types
		{`{"a":1,"a":2}`, `{"a":2}`}, // duplicate keys: the last wins in both
	} {
		same := sameJSON([]byte(c.a), []byte(c.b))
		sums := bytes.Equal(bodyJSONSum([]byte(c.a)), bodyJSONSum([]byte(c.b)))
		if same != sums {
			t.Errorf("%s vs %s: sameJSON %v, equal sums %v", c.a, c.b, same, sums)
		}
	}
	if bodyJSONSum([]byte(`not json`)) != nil {
		t.Error("a body that is not JSON has a JSON sum")
	}
}
