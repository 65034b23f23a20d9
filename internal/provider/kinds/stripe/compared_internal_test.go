package stripe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	segjson "github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/provider/jsonptr"
)

// storedCompared is compared as first written; sums of its bytes are stored
// with every Stripe event, so a new form must give the same bytes or
// redeliveries of events stored before an upgrade would be conflicts.
func storedCompared(doc any) []byte {
	var parts []string
	for _, ptr := range []string{"/id", "/type", "/created", "/livemode", "/account", "/data/object/object", "/data/object/id"} {
		v, _ := jsonptr.Get(doc, ptr)
		s := ""
		if v != nil {
			s = fmt.Sprint(v)
		}
		parts = append(parts, s)
	}
	b, _ := json.Marshal(parts)
	return b
}

func TestComparedKeepsTheStoredBytes(t *testing.T) {
	for _, body := range []string{
		`{"id":"evt_1","type":"invoice.paid","created":1700000000,"livemode":false,"data":{"object":{"object":"invoice","id":"in_1"}}}`,
		`{"id":"evt_2","type":"invoice.paid","created":1.7e9,"livemode":true,"account":"acct_1","data":{"object":{"object":"invoice","id":"in_2"}}}`,
		`{"id":"evt_<&>\"\\","type":"t\u2028é\u0001","created":"1700000000","account":null,"data":{"object":{"object":["a",1],"id":{"x":true}}}}`,
		`{"id":"\ud83d\ude00","account":"","data":null}`,
		`{}`,
		`[]`,
	} {
		var doc any
		if _, err := segjson.Parse([]byte(body), &doc, segjson.UseNumber); err != nil {
			t.Fatal(err)
		}
		if got, want := compared(doc), storedCompared(doc); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", body, got, want)
		}
	}
}
