package pyorders_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Signed webhooks to exact effects with the Python consumer in the place of
// the Go group: the orders binary runs ingest, the relay and the delivery
// groups (not its orders group), and the Python consumer reads the records
// the relay published, an order above 256 KiB by claim, applies the orders
// effect once under duplicates and a second event id, and its confirmation
// intents reach the tenant's destination through the relay.
func TestSignedOrdersToThePythonConsumer(t *testing.T) {
	t.Parallel()
	python := pythonOrders(t).Command[0]
	bin := filepath.Join(t.TempDir(), "orders")
	build := exec.Command("go", "build", "-o", bin, "./cmd/orders")
	build.Dir = filepath.Join("..", "orders") // its module, with its go.sum
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build the orders binary: %v\n%s", err, out)
	}
	dep := newDeployment(t, bin)
	dep.run(t, "migrate")
	dep.start(t, "ingest", "--no-reconcile")
	dep.start(t, "cdc")
	dep.start(t, "consume")
	tenant := strings.Fields(dep.run(t, "tenant", "create", "--name", "shop"))[0]
	source := strings.Fields(dep.run(t, "source", "create", "--tenant", tenant, "--kind", "hmac", "--account", "shop-1",
		"--secret", "shop-secret", "--hmac-header", "X-Shop-Signature", "--hmac-event-id", "/id", "--hmac-event-type", "/type"))[0]
	if _, err := dep.db.Exec(context.Background(), `INSERT INTO stock (tenant_id, sku, available) VALUES ($1, 'sku-a', 1000), ($1, 'sku-b', 1000)`, tenant); err != nil {
		t.Fatal(err)
	}
	confirmations := newReceiver(t)
	dep.endpoint(t, tenant, confirmations.url, "orders.confirmed")
	dep.python(t, python)

	lines := `[{"id":"l1","sku":"sku-a","quantity":2},{"id":"l2","sku":"sku-b","quantity":1}]`
	order := func(eventID, typ, id string, version int, note string) []byte {
		return fmt.Appendf(nil, `{"id":%q,"type":"order.%s","note":%q,"order":{"id":%q,"version":%d,"total":%d,"lines":%s}}`,
			eventID, typ, note, id, version, 1000+version, lines)
	}
	send := func(body []byte) { dep.webhook(t, source, body) }
	for i := range 6 {
		id, note := fmt.Sprintf("o-%d", i), ""
		if i == 0 {
			note = strings.Repeat("n", 300<<10) // above 256 KiB: both its events travel by claim
		}
		placed := order(id+"-placed", "placed", id, 1, note)
		send(placed)
		send(placed)                                           // the shop's retry: a duplicate
		send(order(id+"-placed-again", "placed", id, 1, note)) // the same order under a second event id
		if i%2 == 1 {
			send(order(id+"-cancelled", "cancelled", id, 2, ""))
		}
	}
	want := strings.Join([]string{
		"o-0 placed v1 reserve 2 release 0 confirm 1", "o-1 cancelled v2 reserve 2 release 2 confirm 1",
		"o-2 placed v1 reserve 2 release 0 confirm 1", "o-3 cancelled v2 reserve 2 release 2 confirm 1",
		"o-4 placed v1 reserve 2 release 0 confirm 1", "o-5 cancelled v2 reserve 2 release 2 confirm 1",
		"stock sku-a 994", "stock sku-b 997"}, "\n")
	eventually(t, 2*time.Minute, "the orders' effects", func() bool { return dep.state(t, tenant) == want })
	var claimed bool
	if err := dep.db.QueryRow(context.Background(), `SELECT payload IS NULL FROM outbox WHERE headers->>'ce_id' = 'o-0-placed'`).Scan(&claimed); err != nil || !claimed {
		t.Errorf("the large order's record did not travel by claim (%v)", err)
	}
	var dead int
	if err := dep.db.QueryRow(context.Background(), `SELECT count(*) FROM python_orders_dead_letters`).Scan(&dead); err != nil || dead != 0 {
		t.Errorf("%d dead letters (%v)", dead, err)
	}
	confirmations.wait(t, 6)
}

// deployment is a database of its own and the orders binary's processes
// over it, on topics and a slot of their own, running none of its effect
// groups but feedback's (so not orders': the Python consumer applies them).
type deployment struct {
	bin, prefix, dbURL, brokers string
	env                         []string
	db                          *pgxpool.Pool
	ingestAddr, adminAddr       string
}

func newDeployment(t *testing.T, bin string) *deployment {
	t.Helper()
	base, brokers := os.Getenv("SLUICE_DATABASE_URL"), os.Getenv("SLUICE_KAFKA_BROKERS")
	if base == "" || brokers == "" {
		t.Fatal("SLUICE_DATABASE_URL and SLUICE_KAFKA_BROKERS name the test services (make up writes them to .run/env)")
	}
	d := &deployment{bin: bin, prefix: "pyo" + random(), brokers: brokers, ingestAddr: freeAddr(t), adminAddr: freeAddr(t)}
	d.dbURL = createDatabase(t, base, "python_orders_e2e_"+random())
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	d.env = append(os.Environ(), "SLUICE_DATABASE_URL="+d.dbURL, "SLUICE_KAFKA_BROKERS="+brokers,
		"SLUICE_SECRET_KEY="+base64.StdEncoding.EncodeToString(key), "SLUICE_TOPIC_PREFIX="+d.prefix, "SLUICE_SLOT="+d.prefix,
		"SLUICE_EFFECT_GROUPS=feedback", "SLUICE_TOPIC_PARTITIONS=3", "SLUICE_LOG_LEVEL=warn",
		"SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8", "SLUICE_DELIVERY_BACKOFF=200ms")
	pool, err := pgxpool.New(context.Background(), d.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d.db = pool
	return d
}

// run runs a command of the binary and returns its standard output.
func (d *deployment) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(d.bin, args...)
	cmd.Env = d.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("orders %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return string(out)
}

// start runs a stage (ingest on the deployment's addresses) until the test
// ends, and waits for it to be ready.
func (d *deployment) start(t *testing.T, stage string, extra ...string) {
	t.Helper()
	public, admin := "127.0.0.1:0", freeAddr(t)
	if stage == "ingest" {
		public, admin = d.ingestAddr, d.adminAddr
	}
	d.background(t, exec.Command(d.bin, append([]string{stage, "--http-addr", public, "--admin-addr", admin, "--no-migrate"}, extra...)...), d.env)
	eventually(t, time.Minute, "orders "+stage+" to be ready", func() bool {
		resp, err := http.Get("http://" + admin + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// python runs the Python consumer over the deployment's orders topic.
func (d *deployment) python(t *testing.T, python string) {
	t.Helper()
	env := append(os.Environ(), "SLUICE_DATABASE_URL="+d.dbURL, "SLUICE_KAFKA_BROKERS="+d.brokers,
		"SLUICE_TOPIC_PREFIX="+d.prefix, "PYTHONUNBUFFERED=1")
	d.background(t, exec.Command(python, "-m", "pyorders"), env)
}

// background runs cmd until the test ends, showing its output if the test
// failed.
func (d *deployment) background(t *testing.T, cmd *exec.Cmd, env []string) {
	t.Helper()
	out, err := os.CreateTemp(t.TempDir(), "output")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		out.Close()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("%s:\n%s", strings.Join(cmd.Args, " "), b)
		}
	})
}

// webhook sends body as the shop signs it; a 2xx is required.
func (d *deployment) webhook(t *testing.T, source string, body []byte) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte("shop-secret"))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+d.ingestAddr+"/v1/ingest/"+source, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Shop-Signature", hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out, _ := io.ReadAll(resp.Body); resp.StatusCode/100 != 2 {
		t.Fatalf("webhook: %s %s", resp.Status, out)
	}
}

// endpoint creates a destination of tenant taking the types filters name.
func (d *deployment) endpoint(t *testing.T, tenant, target string, filters ...string) {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(d.run(t, "admintoken", "create", "--role", "operate", "-o", "json")), &tok); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"url": target, "filters": filters})
	req, _ := http.NewRequest(http.MethodPost, "http://"+d.adminAddr+"/admin/v1/tenants/"+tenant+"/endpoints", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create endpoint: %s %s", resp.Status, out)
	}
}

// state is what the orders effect left for tenant, a line per order and
// per stock row.
func (d *deployment) state(t *testing.T, tenant string) string {
	t.Helper()
	rows, err := d.db.Query(context.Background(), `
		SELECT o.order_id || ' ' || o.status || ' v' || o.version
		       || ' reserve ' || (SELECT count(*) FROM order_line_operations l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.order_id AND l.operation = 'reserve')
		       || ' release ' || (SELECT count(*) FROM order_line_operations l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.order_id AND l.operation = 'release')
		       || ' confirm ' || (SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = o.tenant_id::text
		                            AND headers->>'ce_type' = 'orders.confirmed' AND headers->>'ce_subject' = o.order_id)
		FROM orders o WHERE o.tenant_id = $1
		UNION ALL SELECT 'stock ' || sku || ' ' || available FROM stock WHERE tenant_id = $1
		ORDER BY 1`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// receiver is the tenant's destination: it answers 204 and keeps the
// bodies it got, by webhook-id.
type receiver struct {
	url string
	mu  sync.Mutex
	got map[string][]byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got[req.Header.Get("webhook-id")] = body
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// wait waits for n confirmations, each under its own webhook-id, each an
// order's.
func (r *receiver) wait(t *testing.T, n int) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%d confirmations at the destination", n), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.got) == n
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, body := range r.got {
		if !bytes.Contains(body, []byte(`"order_id":"o-`)) {
			t.Errorf("confirmation %s: %s", id, body)
		}
	}
}

// eventually polls cond until it holds, failing after timeout.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func random() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// createDatabase makes a database of the test's own on base's server and
// drops it (and its slot) when the test ends.
func createDatabase(t *testing.T, base, name string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a, err := pgx.Connect(context.Background(), base)
		if err != nil {
			return
		}
		defer a.Close(context.Background())
		_, _ = a.Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name)
		_, _ = a.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1 AND NOT active`, name)
		_, _ = a.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
