package receivers_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	receiver "github.com/sluicehq/sluice/dev/receivers/go"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
)

// root is the repository, seen from this package's directory.
const root = "../.."

// keys are an endpoint's signing keys during a rotation's overlap: the
// receivers hold the older secret, and every request carries a signature
// by each key, newest first, as consumers/delivery sends them.
type keys struct {
	newer, older, stranger []byte
}

func newKeys(t *testing.T) keys {
	t.Helper()
	var k keys
	for _, b := range []*[]byte{&k.newer, &k.older, &k.stranger} {
		*b = make([]byte, 32)
		if _, err := rand.Read(*b); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

func secret(key []byte) string {
	return standardwebhooks.SecretPrefix + base64.StdEncoding.EncodeToString(key)
}

// event is what one request carries.
type event struct {
	id, eventType, subject string
	body                   []byte
}

var (
	invoice = event{id: "msg_01JDESTINATIONSINVOICE01", eventType: "stripe.invoice.paid", subject: "in_1",
		body: []byte(`{"id":"evt_1","object":"event","type":"invoice.paid","data":{"object":{"id":"in_1","amount_paid":2000}}}`)}
	order = event{id: "msg_01JDESTINATIONSORDER0001", eventType: "hmac.order.placed", subject: "ord_7",
		body: []byte(`{"id":"ord_7","type":"order.placed","total":"12.50"}`)}
)

// request is e's request to url as consumers/delivery makes it (send.go):
// the body as received, the Standard Webhooks headers with one v1
// signature per key of sign, space-separated, over signed (the body, unless
// a case alters one or the other), the CloudEvents binary headers and the
// trace.
func request(t *testing.T, url string, e event, signed []byte, at time.Time, sign ...[]byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(e.body))
	if err != nil {
		t.Fatal(err)
	}
	sigs := make([]string, len(sign))
	for i, k := range sign {
		sigs[i] = standardwebhooks.Signature(k, e.id, at, signed)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "Sluice-Destinations/1")
	h.Set(standardwebhooks.IDHeader, e.id)
	h.Set(standardwebhooks.TimestampHeader, fmt.Sprint(at.Unix()))
	h.Set(standardwebhooks.SignatureHeader, strings.Join(sigs, " "))
	h.Set("ce-specversion", "1.0")
	h.Set("ce-id", "evt_1")
	h.Set("ce-type", e.eventType)
	h.Set("ce-source", "/tenants/6f1c2a4e-0b7d-4c1e-9a55-2f7e1c3d8b90/sources/4b8e0c1a-2d3f-4e5a-8b9c-0d1e2f3a4b5c")
	h.Set("ce-subject", e.subject)
	h.Set("ce-time", at.UTC().Format(time.RFC3339Nano))
	h.Set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	return req
}

// exercise sends a receiver at url every case, and checks each answer's
// class: the events it must process, a retry it must not process twice,
// and requests it must refuse. What it processed is checked by the caller,
// from the receiver's own account of it.
func exercise(t *testing.T, url string, k keys) {
	t.Helper()
	now := time.Now()
	tampered := invoice
	tampered.body = bytes.Replace(invoice.body, []byte("2000"), []byte("9000"), 1)
	forged, stale := tampered, invoice
	forged.id, stale.id = "msg_01JDESTINATIONSFORGED001", "msg_01JDESTINATIONSSTALE0001"
	for _, c := range []struct {
		name string
		req  *http.Request
		ok   bool
	}{
		{"a delivery signed by both keys of a rotation", request(t, url, invoice, invoice.body, now, k.newer, k.older), true},
		{"its retry, signed again later", request(t, url, invoice, invoice.body, now.Add(time.Second), k.newer, k.older), true},
		{"a tampered body under the original's signatures", request(t, url, tampered, invoice.body, now, k.newer, k.older), false},
		{"a body signed by another endpoint's key", request(t, url, forged, forged.body, now, k.stranger), false},
		{"a delivery signed ten minutes ago (a replayed capture)", request(t, url, stale, stale.body, now.Add(-10*time.Minute), k.newer, k.older), false},
		{"an event of another type", request(t, url, order, order.body, now, k.newer, k.older), true},
	} {
		resp, err := http.DefaultClient.Do(c.req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if ok := resp.StatusCode >= 200 && resp.StatusCode <= 299; ok != c.ok {
			t.Errorf("%s: answered %d, want a 2xx %v", c.name, resp.StatusCode, c.ok)
		}
	}
}

// processed is what every receiver must have processed, once each, in order.
var processed = []string{
	"processed " + invoice.id + " " + invoice.eventType,
	"processed " + order.id + " " + order.eventType,
}

func checkProcessed(t *testing.T, got []string) {
	t.Helper()
	if !slices.Equal(got, processed) {
		t.Errorf("processed:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(processed, "\n  "))
	}
}

func TestGoReceiver(t *testing.T) {
	t.Parallel()
	k := newKeys(t)
	wh, err := svix.NewWebhook(secret(k.older))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewServer(&receiver.Receiver{Webhook: wh, Process: func(id, eventType string, _ []byte) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, "processed "+id+" "+eventType)
		return nil
	}})
	defer srv.Close()
	exercise(t, srv.URL, k)
	mu.Lock()
	defer mu.Unlock()
	checkProcessed(t, got)
}

// A failed Process is not remembered: Sluice's retry, with the same
// webhook-id, is processed.
func TestGoReceiverProcessesARetryAfterAFailure(t *testing.T) {
	t.Parallel()
	k := newKeys(t)
	wh, err := svix.NewWebhook(secret(k.older))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	srv := httptest.NewServer(&receiver.Receiver{Webhook: wh, Process: func(string, string, []byte) error {
		if calls.Add(1) == 1 {
			return fmt.Errorf("the database is down")
		}
		return nil
	}})
	defer srv.Close()
	for i, want := range []int{http.StatusInternalServerError, http.StatusNoContent, http.StatusNoContent} {
		resp, err := http.DefaultClient.Do(request(t, srv.URL, invoice, invoice.body, time.Now(), k.older))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("attempt %d: answered %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("Process called %d times, want 2 (the failure, then the retry; the third is a duplicate)", n)
	}
}

func TestPythonReceiver(t *testing.T) {
	t.Parallel()
	python := pythonEnv(t)
	runProcess(t, filepath.Join(root, "dev/receivers/python"), python, "receiver.py")
}

func TestNodeReceiver(t *testing.T) {
	t.Parallel()
	node := need(t, "node", "Node.js 18 or later (apt-get install -y nodejs npm)")
	npm := need(t, "npm", "npm (apt-get install -y npm)")
	dir := filepath.Join(root, "dev/receivers/node")
	// The committed lock, installed as is: the version the page quotes.
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in dev/receivers/node: %v\n%s", err, out)
	}
	runProcess(t, dir, node, "receiver.js")
}

// need finds tool on PATH, or fails saying what to install: a receiver
// that cannot be run is a failure, never a skip.
func need(t *testing.T, tool, what string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s is not on PATH: this test runs the receiver examples and needs %s", tool, what)
	}
	return p
}

// pythonEnv is the python of a virtual environment holding the Python
// receiver's pinned requirements, under .run/tools/ and named by the
// requirements' digest, made by dev/receivers/python/install.sh when
// missing.
func pythonEnv(t *testing.T) string {
	t.Helper()
	need(t, "python3", "Python 3 with its venv module (apt-get install -y python3 python3-venv)")
	reqs, err := os.ReadFile(filepath.Join(root, "dev/receivers/python/requirements.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(reqs)
	dir, err := filepath.Abs(filepath.Join(root, ".run/tools", "receivers-python-"+hex.EncodeToString(sum[:6])))
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(python); err == nil {
		return python
	}
	cmd := exec.Command("bash", filepath.Join(root, "dev/receivers/python/install.sh"), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dev/receivers/python/install.sh %s: %v\n%s", dir, err, out)
	}
	return python
}

// runProcess runs a receiver example as its page tells (WEBHOOK_SECRET,
// PORT; it prints "listening on <port>", then a line per event it
// processes), exercises it, stops it, and checks what it printed.
func runProcess(t *testing.T, dir, bin string, args ...string) {
	t.Helper()
	k := newKeys(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret(k.older), "PORT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() {
		_ = cmd.Wait()
		t.Fatalf("%s printed nothing (want \"listening on <port>\"); its stderr:\n%s", bin, stderr.String())
	}
	port, ok := strings.CutPrefix(lines.Text(), "listening on ")
	if !ok {
		_ = cmd.Process.Kill()
		t.Fatalf("%s printed %q first, want \"listening on <port>\"", bin, lines.Text())
	}
	exercise(t, "http://127.0.0.1:"+port, k)
	// Every line of an event is written before its answer: once the
	// process is gone, the pipe holds them all.
	_ = cmd.Process.Kill()
	var got []string
	for lines.Scan() {
		got = append(got, lines.Text())
	}
	_ = cmd.Wait()
	checkProcessed(t, got)
	if t.Failed() {
		t.Logf("%s's stderr:\n%s", bin, stderr.String())
	}
}

// The page quotes each example whole: a fenced block after a line
// `<!-- quote: dev/receivers/... -->` is that file, byte for byte, and
// every example is quoted.
func TestThePageQuotesTheExamples(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(filepath.Join(root, "docs/destinations.md"))
	if err != nil {
		t.Fatal(err)
	}
	quoted := map[string]bool{}
	lines := strings.Split(string(page), "\n")
	for i, l := range lines {
		path, ok := strings.CutPrefix(strings.TrimSpace(l), "<!-- quote: ")
		if !ok {
			continue
		}
		path = strings.TrimSuffix(path, " -->")
		quoted[path] = true
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			t.Errorf("docs/destinations.md:%d: %s is not followed by a fenced block", i+1, l)
			continue
		}
		var body []string
		for _, b := range lines[i+2:] {
			if b == "```" {
				break
			}
			body = append(body, b)
		}
		want, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Errorf("docs/destinations.md:%d: %v", i+1, err)
			continue
		}
		if got := strings.Join(body, "\n") + "\n"; got != string(want) {
			t.Errorf("docs/destinations.md:%d: the block quoting %s differs from the file; copy the file into it", i+2, path)
		}
	}
	for _, example := range []string{"dev/receivers/go/receiver.go", "dev/receivers/python/receiver.py", "dev/receivers/node/receiver.js"} {
		if !quoted[example] {
			t.Errorf("docs/destinations.md does not quote %s", example)
		}
	}
}
