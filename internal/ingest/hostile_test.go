package ingest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// cpuTime is the CPU this test process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Not parallel: it measures the process's CPU, so nothing else may run.
func TestDeeplyNestedBodyIsRefusedInMilliseconds(t *testing.T) {
	b := setup(t, ingest.Config{})
	const levels = 100_000
	body := fmt.Appendf(nil, `{"id":"evt_deep","type":"invoice.paid","created":%d,"data":{"object":`, time.Now().Unix())
	body = append(body, bytes.Repeat([]byte("["), levels)...)
	body = append(body, bytes.Repeat([]byte("]"), levels)...)
	body = append(body, "}}"...)
	body = append(body, bytes.Repeat([]byte(" "), 1<<20-len(body))...) // the default limit, whole

	before := cpuTime(t)
	status, answer := b.post(t, "/v1/ingest/"+b.sourceID, body, stripeHeader(b.secret, body, time.Now()))
	spent := cpuTime(t) - before
	if status != http.StatusBadRequest || !strings.Contains(string(answer), "nests deeper") {
		t.Fatalf("status %d %s, want 400 saying it nests too deep", status, answer)
	}
	// Signing, sending, reading and verifying 1 MiB on both ends included.
	if spent > 50*time.Millisecond {
		t.Errorf("refusing it took %s of CPU, want under 50ms", spent)
	}
	if n := b.storedFor(t, b.tenantID); n != 0 {
		t.Errorf("%d rows stored", n)
	}
}

// stalledUpload sends the headers of a chunked upload and n bytes of its
// body, then waits with the connection open until the returned func closes
// it. Written by hand, so no client library decides when the bytes go out.
func stalledUpload(t *testing.T, base, sourceID string, n int) (cancel func()) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	head := "POST /v1/ingest/" + sourceID + " HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
	chunk := fmt.Sprintf("%x\r\n%s\r\n", n, bytes.Repeat([]byte(" "), n))
	if _, err := io.WriteString(conn, head+chunk); err != nil {
		t.Fatal(err)
	}
	return func() { conn.Close() }
}

// unsigned posts size declared bytes to a source with no valid signature
// and says what the answer was: its status and whether it blamed the
// unverified-bytes budget.
func (b *bundle) unsigned(t *testing.T, sourceID string, size int) string {
	t.Helper()
	status, answer := b.post(t, "/v1/ingest/"+sourceID, bytes.Repeat([]byte(" "), size), http.Header{"Stripe-Signature": {"t=1,v1=00"}})
	return fmt.Sprintf("%d budget=%v", status, strings.Contains(string(answer), "unverified bytes"))
}

// waitHeld waits until the service holds want unverified bytes, as its
// metric says.
func (b *bundle) waitHeld(t *testing.T, want float64) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, fmt.Sprintf("%.0f unverified bytes held", want), func() (bool, error) {
		families, err := b.reg.Gather()
		if err != nil {
			return false, err
		}
		for _, f := range families {
			if f.GetName() == "sluice_ingest_unverified_bytes" {
				if got := f.GetMetric()[0].GetGauge().GetValue(); got != want {
					return false, fmt.Errorf("held %.0f", got)
				}
				return true, nil
			}
		}
		return false, errors.New("no sluice_ingest_unverified_bytes metric")
	})
}

// Bodies not yet authenticated are held against a budget per source and one
// per process: a flood aimed at one source is refused with 429 while other
// sources are still served, and one that fills the process gets 503.
func TestUnverifiedBodiesAreBoundedPerSourceAndProcess(t *testing.T) {
	t.Parallel()
	const kib = 1 << 10
	b := setup(t, ingest.Config{
		Unverified: ingest.Unverified{MaxBytes: 256 * kib, MaxSourceBytes: 160 * kib},
		// The probes below fail authentication; that limit is not the one tested.
		AuthFailureRate: 1e6, AuthFailureBurst: 1e6,
	})
	attacked := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "github", Secret: "gh"})
	other := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "github", Secret: "gh"})

	// A chunked body takes its hold 64 KiB at a time: 100 KiB holds 128.
	release := stalledUpload(t, b.srv.URL, attacked, 100*kib)
	defer release()
	b.waitHeld(t, 128*kib)
	if got := b.unsigned(t, attacked, 64*kib); got != "429 budget=true" {
		t.Fatalf("64 KiB more for the attacked source: %s, want 429 from its bound", got)
	}
	if status := b.send(t, paid("evt_meanwhile", "in_meanwhile"), nil); status != http.StatusAccepted {
		t.Fatalf("a signed delivery to another source meanwhile: status %d, want 202", status)
	}

	release2 := stalledUpload(t, b.srv.URL, other, 100*kib)
	defer release2()
	b.waitHeld(t, 256*kib)
	if got := b.unsigned(t, b.sourceID, 64*kib); got != "503 budget=true" {
		t.Fatalf("64 KiB for a third source with the process at its bound: %s, want 503", got)
	}

	release()
	release2()
	b.waitHeld(t, 0)
	if got := b.unsigned(t, attacked, 64*kib); got != "401 budget=false" {
		t.Fatalf("after the stalled uploads ended: %s, want 401", got)
	}
	if n := b.countFor(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1`, b.tenantID); n != 1 {
		t.Errorf("inbox rows = %d, want the one signed delivery", n)
	}
}

// Other spellings of a real source id are not looked up: 404 at once, never
// a 503 from a failed decrypt.
func TestOnlyTheCanonicalSourceIDNamesASource(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	body := paid("evt_spelling", "in_spelling")
	for name, id := range map[string]string{
		"upper case": strings.ToUpper(b.sourceID),
		"urn":        "urn:uuid:" + b.sourceID,
		"braces":     "{" + b.sourceID + "}",
		"no dashes":  strings.ReplaceAll(b.sourceID, "-", ""),
	} {
		status, _ := b.post(t, "/v1/ingest/"+id, body, stripeHeader(b.secret, body, time.Now()))
		if status != http.StatusNotFound {
			t.Errorf("%s: status %d, want 404", name, status)
		}
	}
	if n := b.storedFor(t, b.tenantID); n != 0 {
		t.Errorf("%d rows stored", n)
	}
}

// A value no consumer could apply is quarantined with the reason at ingest,
// not published to be dead-lettered; the inbox keeps no other value than the
// body says.
func TestValuesNoConsumerCanApplyAreQuarantined(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	cases := map[string]struct {
		body   []byte
		reason string
	}{
		"created in year 31 million": {
			[]byte(`{"id":"evt_far","type":"invoice.paid","created":1000000000000000,"data":{"object":{"id":"in_far","object":"invoice","customer":"cus_1","amount_paid":100,"status":"paid"}}}`),
			"event time at /created",
		},
		"amount beyond any integer": {
			event("evt_huge", "invoice.paid", `{"id":"in_huge","object":"invoice","customer":"cus_1","amount_paid":1e400,"status":"paid"}`),
			"amount_paid",
		},
		"amount in exponent form": {
			event("evt_exp", "invoice.paid", `{"id":"in_exp","object":"invoice","customer":"cus_1","amount_paid":1e2,"status":"paid"}`),
			"amount_paid",
		},
	}
	for name, tc := range cases {
		if status := b.send(t, tc.body, nil); status != http.StatusAccepted {
			t.Errorf("%s: status %d, want 202 (quarantined)", name, status)
		}
	}
	rows, err := b.pool.Query(context.Background(), `SELECT event_id, status, coalesce(reason, ''), event_time IS NULL FROM inbox WHERE tenant_id = $1`, b.tenantID)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for rows.Next() {
		var id, status, reason string
		var noTime bool
		if err := rows.Scan(&id, &status, &reason, &noTime); err != nil {
			t.Fatal(err)
		}
		got[id] = status + ": " + reason
		if id == "evt_far" && !noTime {
			t.Errorf("evt_far: an event time was stored")
		}
	}
	for name, tc := range cases {
		id := strings.Split(strings.Split(string(tc.body), `"id":"`)[1], `"`)[0]
		if !strings.HasPrefix(got[id], "quarantined: ") || !strings.Contains(got[id], tc.reason) {
			t.Errorf("%s: inbox says %q, want quarantined naming %s", name, got[id], tc.reason)
		}
	}
	if n := b.outbox(t); n != 0 {
		t.Errorf("%d outbox rows, want none", n)
	}
}

// Two ids that differ only in bytes that are not UTF-8 would both decode
// to U+FFFD and share one event key: the second would become a conflict.
func TestEventIDsThatAreNotUTF8AreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	object := `{"id":"in_utf","object":"invoice","customer":"cus_1","amount_paid":100,"status":"paid"}`
	for name, id := range map[string]string{
		"byte ff":         "evt_\xff",
		"byte fe":         "evt_\xfe",
		"lone surrogate":  `evt_\ud800`,
		"other surrogate": `evt_\udfff`,
	} {
		body := fmt.Appendf(nil, `{"id":"%s","type":"invoice.paid","created":%d,"data":{"object":%s}}`, id, time.Now().Unix(), object)
		if status := b.send(t, body, nil); status != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400", name, status)
		}
	}
	if n := b.storedFor(t, b.tenantID); n != 0 {
		t.Errorf("%d rows stored", n)
	}
}

func TestMediaTypeIsMatchedWithoutRegardToCase(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	status := b.send(t, paid("evt_case", "in_case"), func(r *http.Request) { r.Header.Set("Content-Type", "APPLICATION/JSON; Charset=UTF-8") })
	if status != http.StatusAccepted {
		t.Fatalf("status %d, want 202", status)
	}
}

// A request framed both by Content-Length and chunked is read as chunked,
// and nothing after it on the connection is read: a front proxy that framed
// it by its length could have hidden a second request in its body.
func TestNothingAfterAChunkedRequestIsReadFromItsConnection(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	first, smuggled := paid("evt_carrier", "in_carrier"), paid("evt_smuggled", "in_smuggled")
	inner := rawRequest(b.sourceID, b.secret, smuggled, fmt.Sprintf("Content-Length: %d\r\n", len(smuggled)), string(smuggled))
	chunked := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(first), first)
	outer := rawRequest(b.sourceID, b.secret, first, fmt.Sprintf("Content-Length: %d\r\nTransfer-Encoding: chunked\r\n", len(chunked)+len(inner)), chunked)

	conn, err := net.Dial("tcp", strings.TrimPrefix(b.srv.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, outer+inner); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("first request: status %d", resp.StatusCode)
	}
	if second, err := http.ReadResponse(r, nil); err == nil {
		t.Fatalf("the request hidden behind the chunked body was answered %d", second.StatusCode)
	} else if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("after the first answer: %v, want the connection closed", err)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND event_id = 'evt_smuggled'`); n != 0 {
		t.Fatal("the smuggled request was stored")
	}
}

// rawRequest writes a signed POST to a source by hand, with framing headers
// and the body as given.
func rawRequest(sourceID, secret string, signed []byte, framing, body string) string {
	sig := signature.SignStripe(secret, signed, time.Now())
	return "POST /v1/ingest/" + sourceID + " HTTP/1.1\r\nHost: sluice\r\nContent-Type: application/json\r\n" +
		"Stripe-Signature: " + sig + "\r\n" + framing + "\r\n" + body
}
