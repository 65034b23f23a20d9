package envelope

import (
	stdjson "encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The record format is the contract between the stages: ingest writes it,
// the relay carries it, consumers read it. Each case goes both ways.
func TestRecordFormatBothWays(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 5, 6, 7, 8, 9, 123456789, time.UTC)
	full := Event{
		ID: "evt_1", Source: SourceURI("t1", "s1"), Type: "stripe.invoice.paid", Subject: "in_1", Time: at,
		TenantID: "t1", SourceID: "s1", SourceAccount: "acct_1", PartitionKey: Key("t1", "invoice", "in_1"),
		ContentType: "application/json", TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		APIVersion: "2025-03-31.basil", DataSchema: "https://sluice.invalid/s.json", InboxID: "42", Claim: "42", Recovered: true,
	}
	cases := map[string]struct {
		ev      Event
		headers map[string]string
	}{
		"every field": {full, map[string]string{
			"ce_specversion": "1.0", "ce_id": "evt_1", "ce_source": "/tenants/t1/sources/s1", "ce_type": "stripe.invoice.paid",
			"ce_subject": "in_1", "ce_time": "2026-05-06T07:08:09.123456789Z", "ce_tenantid": "t1", "ce_sourceaccount": "acct_1",
			"ce_partitionkey": "t1/invoice/in_1", "content-type": "application/json",
			"traceparent":    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
			HeaderAPIVersion: "2025-03-31.basil", HeaderDataSchema: "https://sluice.invalid/s.json", HeaderInboxID: "42",
			HeaderClaim: "42", HeaderRecovered: "true",
		}},
		"text JSON escapes": {
			Event{ID: `a"b\c<d>&`, Source: "é\u2028\x01\xff", Type: "t", TenantID: "t", SourceAccount: "a", PartitionKey: "k", Subject: "\t"},
			map[string]string{"ce_specversion": "1.0", "ce_id": `a"b\c<d>&`, "ce_source": "é\u2028\x01\xff", "ce_type": "t",
				"ce_tenantid": "t", "ce_sourceaccount": "a", "ce_partitionkey": "k", "ce_subject": "\t"},
		},
		"only what is required": {
			Event{ID: "e", Source: SourceURI("t", "s"), Type: "api.x", TenantID: "t", SourceID: "s", SourceAccount: "a", PartitionKey: "t/x/o"},
			map[string]string{"ce_specversion": "1.0", "ce_id": "e", "ce_source": "/tenants/t/sources/s", "ce_type": "api.x",
				"ce_tenantid": "t", "ce_sourceaccount": "a", "ce_partitionkey": "t/x/o"},
		},
	}
	for name, tc := range cases {
		got := tc.ev.Headers()
		if !reflect.DeepEqual(got, tc.headers) {
			t.Errorf("%s: headers\n got %v\nwant %v", name, got, tc.headers)
		}
		// The outbox's form, written from the event, is the map's as
		// json.Marshal writes it: keys sorted, HTML escaped.
		want, err := stdjson.Marshal(tc.headers)
		if err != nil {
			t.Fatal(err)
		}
		if outbox := tc.ev.OutboxHeaders(); string(outbox) != string(want) || string(OutboxHeaders(got)) != string(want) {
			t.Errorf("%s: outbox headers\n got %s\nwant %s", name, outbox, want)
		}
		if appended := tc.ev.AppendOutboxHeaders([]byte("{}")); string(appended) != "{}"+string(want) {
			t.Errorf("%s: outbox headers appended to {}\n got %s\nwant {}%s", name, appended, want)
		}
		recordHeaders := RecordHeaders(got)
		for i := 1; i < len(recordHeaders); i++ {
			if recordHeaders[i-1].Key >= recordHeaders[i].Key {
				t.Errorf("%s: record headers not sorted by key: %q before %q", name, recordHeaders[i-1].Key, recordHeaders[i].Key)
			}
		}
		back, err := Parse(HeaderMap(recordHeaders))
		if err != nil {
			t.Fatalf("%s: parse: %v", name, err)
		}
		if !reflect.DeepEqual(back, tc.ev) {
			t.Errorf("%s: parsed back\n got %+v\nwant %+v", name, back, tc.ev)
		}
	}
}

func TestParseRefusesWhatIsNotAnEvent(t *testing.T) {
	t.Parallel()
	valid := Event{ID: "e", Source: SourceURI("t", "s"), Type: "x", TenantID: "t", PartitionKey: "k"}.Headers()
	mutate := func(k, v string) map[string]string {
		h := HeaderMap(RecordHeaders(valid))
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	for name, h := range map[string]map[string]string{
		"other spec version": mutate(HeaderSpecVersion, "0.3"),
		"no spec version":    mutate(HeaderSpecVersion, ""),
		"no id":              mutate(HeaderID, ""),
		"no type":            mutate(HeaderType, ""),
		"no tenant":          mutate(HeaderTenantID, ""),
		"unreadable time":    mutate(HeaderTime, "yesterday"),
	} {
		if _, err := Parse(h); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if ev, err := Parse(HeaderMap([]kgo.RecordHeader{{Key: HeaderSpecVersion, Value: []byte("1.0")}, {Key: HeaderID, Value: []byte("a")},
		{Key: HeaderID, Value: []byte("b")}, {Key: HeaderType, Value: []byte("x")}, {Key: HeaderTenantID, Value: []byte("t")}})); err != nil || ev.ID != "b" {
		t.Errorf("a header sent twice: %+v, %v; want the last value", ev, err)
	}
	if !strings.HasPrefix(NewTraceParent(), "00-") || len(NewTraceParent()) != 55 {
		t.Errorf("trace parent %q is not W3C-shaped", NewTraceParent())
	}
}

// OutboxHeaders replaced json.Marshal of the headers map in every writer of
// outbox rows; the text must stay the bytes it gave, for any value a
// provider can put in a header.
// Each character json.Marshal escapes, alone in a value, is escaped in an
// event's outbox headers too.
func TestEventOutboxHeadersEscapeAsMarshalDoes(t *testing.T) {
	t.Parallel()
	for _, c := range []string{`"`, `\`, "<", ">", "&", "\x01", "\x7f", "é", "\u2028", "\u2029", "\xff", " "} {
		ev := Event{ID: "e", Type: "t", TenantID: "t", SourceAccount: "a", PartitionKey: "k", Subject: "x" + c + "y"}
		want, err := stdjson.Marshal(ev.Headers())
		if err != nil {
			t.Fatal(err)
		}
		if got := ev.OutboxHeaders(); string(got) != string(want) {
			t.Errorf("%q:\n got %s\nwant %s", c, got, want)
		}
	}
}

func TestOutboxHeadersAreWhatMarshalGives(t *testing.T) {
	for _, h := range []map[string]string{
		{},
		{"ce_id": "evt_1", "ce_type": "invoice.paid", "ce_specversion": "1.0"},
		{"ce_subject": `a"b\c<d>&`, "ce_time": "2026-12-01T00:00:00Z", "x": "é\u2028\x01\xff"},
	} {
		want, err := stdjson.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if got := OutboxHeaders(h); string(got) != string(want) {
			t.Errorf("%v:\n got %s\nwant %s", h, got, want)
		}
	}
}

// benchEvent is an accepted Stripe event's envelope, as the bench sends.
func benchEvent() Event {
	return Event{
		ID: "evt_1NirD82eZvKYlo2CIvbtLWuY", Source: SourceURI("8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10", "2b7e4d7e-0f0e-4a7c-8d5e-5f7b9a1c2d3e"),
		Type: "stripe.invoice.paid", Subject: "in_1NirD82eZvKYlo2CIvbtLWuY", Time: time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC),
		TenantID: "8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10", SourceAccount: "acct_1", PartitionKey: Key("8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10", "invoice", "in_1"),
		ContentType: "application/json", TraceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", APIVersion: "2025-03-31.basil",
	}
}

func BenchmarkOutboxHeaders(b *testing.B) {
	ev := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		ev.OutboxHeaders()
	}
}

// ParseRecord reads what Parse(HeaderMap(hs)) reads, refusals included:
// header lists built from events, shuffled, with headers repeated (the last
// value wins), unknown, emptied or dropped, and values of other shapes.
func TestParseRecordIsParseOfHeaderMap(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	at := time.Date(2026, 12, 1, 8, 0, 0, 123456789, time.UTC)
	base := Event{ID: "evt_1", Source: SourceURI("t1", "s1"), Type: "stripe.invoice.paid", Subject: "in_1", TenantID: "t1",
		SourceAccount: "acct", PartitionKey: "t1/invoice/in_1", ContentType: "application/json", TraceParent: NewTraceParent(),
		APIVersion: "2024-06-20", DataSchema: "sluice:stripe/x/1", InboxID: "42", Claim: "1", Recovered: true, Time: at}
	values := []string{"", "1.0", "0.3", "true", "false", "x", "é\x00\"", "2026-12-01T08:00:00Z", "yesterday", "/tenants/a/sources/b"}
	keys := []string{"sluice_other", "ce_ID", ""}
	for range eventHeaders {
		keys = append(keys, eventHeaders[len(keys)%len(eventHeaders)].key)
	}
	for _, h := range eventHeaders {
		keys = append(keys, h.key)
	}
	parsed := 0
	for n := range 5000 {
		hs := RecordHeaders(base.Headers())
		for range r.IntN(4) {
			switch i := r.IntN(len(hs)); r.IntN(4) {
			case 0:
				hs = append(hs[:i], hs[i+1:]...)
			case 1:
				hs[i].Value = []byte(values[r.IntN(len(values))])
			case 2:
				hs = append(hs, kgo.RecordHeader{Key: hs[i].Key, Value: []byte(values[r.IntN(len(values))])})
			default:
				hs = append(hs, kgo.RecordHeader{Key: keys[r.IntN(len(keys))], Value: []byte(values[r.IntN(len(values))])})
			}
			if len(hs) == 0 {
				break
			}
		}
		r.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
		want, wantErr := Parse(HeaderMap(hs))
		got, err := ParseRecord(hs)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d, %q:\n got %+v, %v\nwant %+v, %v", n, hs, got, err, want, wantErr)
		}
		if err == nil {
			parsed++
		}
	}
	if parsed < 500 || parsed > 4500 {
		t.Fatalf("%d of 5000 parsed: the cases do not exercise both sides", parsed)
	}
}

func TestHeaderKeyIsTheKey(t *testing.T) {
	for _, k := range []string{HeaderID, HeaderTime, HeaderRecovered, "sluice_outboxid", "other", ""} {
		if got := HeaderKey([]byte(k)); got != k {
			t.Errorf("HeaderKey(%q) = %q", k, got)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = HeaderKey([]byte(HeaderTraceParent)) }); n != 0 {
		t.Errorf("%v allocations for a known key", n)
	}
}

func BenchmarkParseRecord(b *testing.B) {
	ev := benchEvent()
	ev.InboxID = "123456789"
	hs := append(RecordHeaders(ev.Headers()), kgo.RecordHeader{Key: HeaderOutboxID, Value: []byte("987654321")})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRecord(hs); err != nil {
			b.Fatal(err)
		}
	}
}

// headerIndex's switch names every header of eventHeaders at its place.
func TestHeaderIndexIsThePlace(t *testing.T) {
	for i, h := range eventHeaders {
		if got := headerIndex(h.key); got != i {
			t.Errorf("headerIndex(%q) = %d, want %d", h.key, got, i)
		}
	}
	if got := headerIndex("ce_ID"); got != -1 {
		t.Errorf("headerIndex(ce_ID) = %d", got)
	}
}

// plainJSON's eight bytes at a time say what the byte table says, for
// every byte at every place of a word and strings of every length.
func TestPlainJSONIsTheByteTable(t *testing.T) {
	t.Parallel()
	slow := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !plainByte[s[i]] {
				return false
			}
		}
		return true
	}
	for c := range 256 {
		for n := 1; n <= 19; n++ {
			for at := range n {
				b := []byte(strings.Repeat("a", n))
				b[at] = byte(c)
				if got, want := plainJSON(string(b)), slow(string(b)); got != want {
					t.Fatalf("plainJSON(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}
