package ingest

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// The answer is appended by hand for speed; it must stay the bytes and
// headers gin's JSON rendering of the same two fields gives.
func TestWriteOutcomeAnswersWhatGinJSONWould(t *testing.T) {
	for _, id := range []string{"evt_1NvQ2x", `a"b\c`, "<script>&", "é\u2028\x01", "\xff"} {
		want := httptest.NewRecorder()
		wc, _ := gin.CreateTestContext(want)
		wc.JSON(OutcomeDuplicate.status(), gin.H{"outcome": OutcomeDuplicate, "event_id": id})

		got := httptest.NewRecorder()
		gc, _ := gin.CreateTestContext(got)
		writeOutcome(gc, OutcomeDuplicate, id)

		if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("id %q: got %d %s %q, want %d %s %q", id, got.Code, got.Header().Get("Content-Type"), got.Body, want.Code, want.Header().Get("Content-Type"), want.Body)
		}
	}
}

// headersJSON replaced json.Marshal of the headers map; Postgres stores
// them as jsonb either way, but the text must stay valid JSON with the same
// members for any value a provider can put in a header.
func TestHeadersJSONIsWhatMarshalGives(t *testing.T) {
	for _, h := range []map[string]string{
		nil,
		{},
		{"ce_id": "evt_1", "ce_type": "invoice.paid", "ce_specversion": "1.0"},
		{"ce_subject": `a"b\c<d>&`, "ce_time": "2026-12-01T00:00:00Z", "x": "é\u2028\x01\xff"},
	} {
		want, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			want = []byte("{}") // the accepting statement never gets null
		}
		if got := headersJSON(h); got != string(want) {
			t.Errorf("%v:\n got %s\nwant %s", h, got, want)
		}
	}
}
