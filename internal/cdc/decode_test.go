package cdc

import (
	"encoding/binary"
	"encoding/hex"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// insertMessage builds a pgoutput Insert message whose columns are in
// format ('t' text or 'b' binary); a nil column is NULL.
func insertMessage(relation uint32, format byte, cols ...[]byte) []byte {
	msg := []byte{'I', 0, 0, 0, 0, 'N', 0, 0}
	binary.BigEndian.PutUint32(msg[1:], relation)
	binary.BigEndian.PutUint16(msg[6:], uint16(len(cols)))
	for _, c := range cols {
		if c == nil {
			msg = append(msg, 'n')
			continue
		}
		msg = append(msg, format)
		msg = binary.BigEndian.AppendUint32(msg, uint32(len(c)))
		msg = append(msg, c...)
	}
	return msg
}

func bytea(b string) []byte { return []byte(`\x` + hex.EncodeToString([]byte(b))) }

// outboxInsert is an outbox row as pgoutput sends it, in the column order
// of migrations/00001_core.sql.
func outboxInsert(headers string, payload []byte, inboxID []byte) []byte {
	return insertMessage(7, 't', []byte("42"), []byte("2026-11-30 01:00:00+00"), []byte("sluice.invoices"),
		bytea("t/invoice/in_1"), []byte(headers), payload, inboxID)
}

var testColumns = outboxColumns{id: 0, topic: 2, key: 3, headers: 4, payload: 5, inboxID: 6,
	idType: oidInt8, headersType: oidJSONB, inboxIDType: oidInt8}

// binaryOutboxInsert is the same row in pgoutput's binary format.
func binaryOutboxInsert(headers string, payload []byte, inboxID int64) []byte {
	var inbox []byte // NULL when negative
	if inboxID >= 0 {
		inbox = binary.BigEndian.AppendUint64(nil, uint64(inboxID))
	}
	return insertMessage(7, 'b', binary.BigEndian.AppendUint64(nil, 42),
		binary.BigEndian.AppendUint64(nil, 0), // created_at
		[]byte("sluice.invoices"), []byte("t/invoice/in_1"),
		append([]byte{1}, headers...), // jsonb's binary format: version 1, then the text
		payload, inbox)
}

func TestDecodeBinaryFormat(t *testing.T) {
	t.Parallel()
	_, cols, err := parseInsert(binaryOutboxInsert(`{"ce_id": "evt_1"}`, []byte("body"), 9))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := testColumns.record(cols)
	if err != nil {
		t.Fatal(err)
	}
	got := headerMap(rec)
	if string(rec.Value) != "body" || string(rec.Key) != "t/invoice/in_1" || got["ce_id"] != "evt_1" ||
		got["sluice_outboxid"] != "42" || got["sluice_inboxid"] != "9" {
		t.Fatalf("record %q %q %v", rec.Key, rec.Value, got)
	}
	_, cols, _ = parseInsert(binaryOutboxInsert(`{}`, nil, 11))
	if rec, err = testColumns.record(cols); err != nil || headerMap(rec)["sluice_claim"] != "inbox/11" || rec.Value != nil {
		t.Fatalf("claim record %v %v", rec, err)
	}
}

func headerMap(rec *kgo.Record) map[string]string {
	m := map[string]string{}
	for _, h := range rec.Headers {
		if _, dup := m[h.Key]; dup {
			panic("duplicate header " + h.Key)
		}
		m[h.Key] = string(h.Value)
	}
	return m
}

func TestDecodeOutboxInsertIntoRecord(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		headers   string
		payload   []byte
		inbox     []byte
		wantValue string
		want      map[string]string
	}{
		{"inline body", `{"ce_id": "evt_1", "ce_type": "stripe.invoice.paid"}`, bytea(`{"id":"evt_1"}`), []byte("9"),
			`{"id":"evt_1"}`, map[string]string{"ce_id": "evt_1", "ce_type": "stripe.invoice.paid", "sluice_outboxid": "42", "sluice_inboxid": "9"}},
		{"escaped header value", `{"ce_id": "evt_\"2\"", "ce_subject": "caf\u00e9"}`, bytea("x"), nil,
			"x", map[string]string{"ce_id": `evt_"2"`, "ce_subject": "café", "sluice_outboxid": "42"}},
		{"claim", `{"ce_id": "evt_3", "sluice_outboxid": "stale"}`, nil, []byte("11"),
			"", map[string]string{"ce_id": "evt_3", "sluice_outboxid": "42", "sluice_inboxid": "11", "sluice_claim": "inbox/11"}},
		{"no headers", `{}`, bytea(""), nil, "", map[string]string{"sluice_outboxid": "42"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rel, cols, err := parseInsert(outboxInsert(tc.headers, tc.payload, tc.inbox))
			if err != nil || rel != 7 {
				t.Fatalf("parseInsert: relation %d, %v", rel, err)
			}
			rec, err := testColumns.record(cols)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Topic != "sluice.invoices" || string(rec.Key) != "t/invoice/in_1" || string(rec.Value) != tc.wantValue {
				t.Fatalf("record %s %q %q", rec.Topic, rec.Key, rec.Value)
			}
			got := headerMap(rec)
			if len(got) != len(tc.want) {
				t.Fatalf("headers %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("header %s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestDecodeRefusesUnreadableRows(t *testing.T) {
	t.Parallel()
	for name, msg := range map[string][]byte{
		"headers not an object of strings": outboxInsert(`{"ce_id": 1}`, bytea("x"), nil),
		"bytea not hex":                    outboxInsert(`{}`, []byte("plain"), nil),
	} {
		_, cols, err := parseInsert(msg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := testColumns.record(cols); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
	if _, _, err := parseInsert(outboxInsert(`{}`, nil, nil)[:20]); err == nil {
		t.Error("a truncated message decoded")
	}
}

func BenchmarkDecodeOutboxInsert(b *testing.B) {
	b.Run("text", func(b *testing.B) { benchmarkDecode(b, false) })
	b.Run("binary", func(b *testing.B) { benchmarkDecode(b, true) })
}

func benchmarkDecode(b *testing.B, binaryFormat bool) {
	const headers = `{"ce_id": "evt_1234567890", "ce_time": "2026-11-30T01:00:00Z", "ce_type": "stripe.invoice.paid", "ce_source": "/tenants/6c0e/sources/9a57", "ce_tenantid": "6c0e1c5e-7f3a-4d0b-9a57-0c3f1f0e9b11", "content-type": "application/json", "ce_partitionkey": "t/invoice/in_1", "ce_specversion": "1.0"}`
	msg := outboxInsert(headers, bytea(string(make([]byte, 600))), []byte("12345"))
	if binaryFormat {
		msg = binaryOutboxInsert(headers, make([]byte, 600), 12345)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, cols, err := parseInsert(msg)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := testColumns.record(cols); err != nil {
			b.Fatal(err)
		}
	}
}
