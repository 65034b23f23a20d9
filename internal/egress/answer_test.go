package egress

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"
)

// counting counts what is read through it.
type counting struct {
	r io.Reader
	n int64
}

func (c *counting) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestReadAnswerKeepsAtMostMaxAndReadsABoundedAmount(t *testing.T) {
	t.Parallel()
	const tenMiB = 10 << 20
	srv := newEndpoint(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), tenMiB))
	})
	client := NewClient(Config{Policy: Policy{Allow: loopback}})
	for _, max := range []int{0, 1, 1024, 100 << 10} {
		resp, err := post(t, client, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body := &counting{r: resp.Body}
		start := time.Now()
		b, err := ReadAnswer(body, max)
		if err != nil {
			t.Fatalf("ReadAnswer(%d): %v", max, err)
		}
		if len(b) != max {
			t.Errorf("ReadAnswer(%d) kept %d bytes, want %d", max, len(b), max)
		}
		if limit := int64(max + drainLimit); body.n > limit {
			t.Errorf("ReadAnswer(%d) read %d bytes of the answer, want at most %d", max, body.n, limit)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("ReadAnswer(%d) took %s", max, d)
		}
	}
}

func TestReadAnswerReturnsAShortAnswerWhole(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		answer string
		max    int
		want   string
	}{
		{"", 1024, ""},
		{"ok", 1024, "ok"},
		{"0123456789", 4, "0123"},
		{"ok", -1, ""},
	} {
		b, err := ReadAnswer(strings.NewReader(c.answer), c.max)
		if err != nil || string(b) != c.want {
			t.Errorf("ReadAnswer(%q, %d) = %q, %v, want %q", c.answer, c.max, b, err, c.want)
		}
	}
}

// An answer longer than what is kept but within the drain leaves the
// connection reusable: the next delivery to the endpoint does not dial.
func TestReadAnswerDrainsSoTheConnectionIsReused(t *testing.T) {
	t.Parallel()
	srv := newEndpoint(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(bytes.Repeat([]byte("x"), 32<<10))
	})
	client := NewClient(Config{Policy: Policy{Allow: loopback}})
	var reused []bool
	for range 2 {
		ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) { reused = append(reused, i.Reused) },
		})
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ReadAnswer(resp.Body, 1024); err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	if len(reused) != 2 || !reused[1] {
		t.Errorf("connections reused: %v, want the second request on the first's connection", reused)
	}
}
