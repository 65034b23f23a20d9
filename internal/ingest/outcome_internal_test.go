package ingest

import (
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
