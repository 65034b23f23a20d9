package consumers

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// fetched is n records like a backlog's: a key, a webhook's body and the
// envelope's headers, all slices of one buffer as a decompressed fetch is.
func fetched(n int) []*kgo.Record {
	var fetch []byte
	type span struct{ at, n int }
	add := func(s string) span {
		fetch = append(fetch, s...)
		return span{len(fetch) - len(s), len(s)}
	}
	type rec struct {
		key, value span
		headers    []span
	}
	recs := make([]rec, n)
	for i := range recs {
		recs[i].key = add(fmt.Sprintf("8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10/invoice/in_%d", i))
		recs[i].value = add(fmt.Sprintf(`{"id":"evt_%d","object":"event","data":{"object":{"id":"in_%d"}}}`, i, i) + string(bytes.Repeat([]byte{' '}, 900)))
		for h := range 14 {
			recs[i].headers = append(recs[i].headers, add(fmt.Sprintf("header value %d of record %d", h, i)))
		}
	}
	out := make([]*kgo.Record, n)
	at := func(s span) []byte { return fetch[s.at : s.at+s.n : s.at+s.n] }
	for i, r := range recs {
		out[i] = &kgo.Record{Key: at(r.key), Value: at(r.value)}
		for h, s := range r.headers {
			out[i].Headers = append(out[i].Headers, kgo.RecordHeader{Key: fmt.Sprintf("h%d", h), Value: at(s)})
		}
	}
	out[0].Key = nil // a record without a key keeps none
	return out
}

// detach keeps every key, value and header value, in copies that share no
// byte with the fetch.
func TestDetachCopiesOutOfTheFetch(t *testing.T) {
	t.Parallel()
	recs, want := fetched(50), fetched(50)
	_, data := recordBytes(recs)
	fetch := map[*byte]bool{}
	for _, r := range recs {
		for _, b := range append([][]byte{r.Key, r.Value}, headerValues(r)...) {
			for i := range b {
				fetch[&b[i]] = true
			}
		}
	}
	detach(recs, data)
	for i, r := range recs {
		w := want[i]
		if (r.Key == nil) != (w.Key == nil) || !bytes.Equal(r.Key, w.Key) || !bytes.Equal(r.Value, w.Value) {
			t.Fatalf("record %d: key %q value %q, want %q %q", i, r.Key, r.Value, w.Key, w.Value)
		}
		got := append([][]byte{r.Key, r.Value}, headerValues(r)...)
		for j, b := range headerValues(r) {
			if !bytes.Equal(b, w.Headers[j].Value) {
				t.Fatalf("record %d header %d: %q, want %q", i, j, b, w.Headers[j].Value)
			}
		}
		for _, b := range got {
			if len(b) > 0 && (fetch[&b[0]] || fetch[&b[len(b)-1]]) {
				t.Fatalf("record %d still shares the fetch's bytes", i)
			}
			if cap(b) != len(b) {
				t.Fatalf("record %d: a slice of capacity %d for %d bytes: an append would write over its neighbour", i, cap(b), len(b))
			}
		}
	}
}

func headerValues(r *kgo.Record) [][]byte {
	var vs [][]byte
	for _, h := range r.Headers {
		vs = append(vs, h.Value)
	}
	return vs
}

func BenchmarkDetach(b *testing.B) {
	recs := fetched(2300)
	b.ReportAllocs()
	for b.Loop() {
		_, data := recordBytes(recs)
		detach(recs, data)
	}
}
