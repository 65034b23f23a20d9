package orders_test

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
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Signed webhooks to exact effects, end to end, with the orders binary as
// a deployment runs it (ingest, the relay and the consumers as processes of
// their own): duplicates, a second event id for one order, a kill -9 of the
// consuming process and a rewind of the group change no effect; every
// order's confirmation reaches the tenant's destination. Once for a
// deployment running the orders group alone (its lag lists that group and
// the delivery groups only), once beside Sluice's built-in groups.
func TestSignedOrdersToExactEffects(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "orders")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/orders").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/orders: %v\n%s", err, out)
	}
	for _, d := range []struct{ name, groups string }{{"orders alone", "orders"}, {"beside the built-in groups", ""}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			endToEnd(t, bin, d.groups)
		})
	}
}

func endToEnd(t *testing.T, bin, effectGroups string) {
	dep := newDeployment(t, bin, effectGroups)
	dep.cli(t, "migrate")
	dep.start(t, "ingest", "--no-reconcile")
	dep.start(t, "cdc")
	consume := dep.start(t, "consume")
	tenant := firstLine(dep.cli(t, "tenant", "create", "--name", "shop"))
	source := firstLine(dep.cli(t, "source", "create", "--tenant", tenant, "--kind", "hmac", "--account", "shop-1",
		"--secret", "shop-secret", "--hmac-header", "X-Shop-Signature", "--hmac-event-id", "/id", "--hmac-event-type", "/type"))
	if _, err := dep.db.Exec(context.Background(), `INSERT INTO stock (tenant_id, sku, available) VALUES ($1, 'sku-a', 1000), ($1, 'sku-b', 1000)`, tenant); err != nil {
		t.Fatal(err)
	}
	receiver := newReceiver(t)
	dep.endpoint(t, tenant, receiver.url, "orders.confirmed")

	shop := &shop{t: t, url: dep.ingestURL + "/v1/ingest/" + source}
	for i := range 12 {
		shop.order(fmt.Sprintf("o-%d", i), i%3 == 0, i%4 == 0)
	}
	want := shop.expected()
	dep.waitState(t, tenant, want)

	// kill -9 of the consuming process, with more orders on the way.
	consume.kill9(t)
	for i := 12; i < 20; i++ {
		shop.order(fmt.Sprintf("o-%d", i), i%3 == 0, i%4 == 0)
	}
	consume = dep.start(t, "consume")
	want = shop.expected()
	dep.waitState(t, tenant, want)

	// A rewind of the group to its earliest offset changes nothing.
	consume.stop(t)
	dep.cli(t, "replay", "--group", dep.prefix+".orders", "--to-earliest", "--execute")
	dep.start(t, "consume")
	dep.waitCaughtUp(t, dep.prefix+".orders")
	if got := dep.state(t, tenant); got != want {
		t.Errorf("after the rewind:\n%s\nwant\n%s", got, want)
	}

	groups := dep.lagGroups(t)
	if effectGroups == "orders" {
		if want := []string{dep.prefix + ".destinations", dep.prefix + ".dispatch", dep.prefix + ".orders"}; !slices.Equal(groups, want) {
			t.Errorf("lag lists %v, want the orders group and the delivery groups: %v", groups, want)
		}
	} else if !slices.Contains(groups, dep.prefix+".credits") || !slices.Contains(groups, dep.prefix+".orders") {
		t.Errorf("lag lists %v, want the built-in groups and the orders group", groups)
	}
	receiver.waitConfirmations(t, shop.orders())

	// An order's event shows the group's effects on the order in its
	// trail; erasing the tenant erases them, and its stock.
	dep.trailShowsTheOrder(t, tenant, "o-1")
	if out := dep.cli(t, "erase", "tenant", tenant, "--yes"); !strings.Contains(out, fmt.Sprintf("effects %d", shop.orders())) {
		t.Errorf("erase tenant: %q, want its %d orders counted as its effects", out, shop.orders())
	}
	if got := dep.state(t, tenant); got != "" {
		t.Errorf("after the tenant's erasure:\n%s\nwant nothing", got)
	}
}

// trailShowsTheOrder: the trail of order's first event (events trail)
// shows the order's projection, in its last state, and its confirmation,
// under the group's id.
func (d *deployment) trailShowsTheOrder(t *testing.T, tenant, order string) {
	t.Helper()
	var id int64
	if err := d.db.QueryRow(context.Background(), `SELECT id FROM inbox WHERE tenant_id = $1 AND event_id = $2`, tenant, order+"-placed").Scan(&id); err != nil {
		t.Fatal(err)
	}
	var trail struct {
		Effects []struct {
			Group, Kind, State string
			BusinessKey        string `json:"business_key"`
		} `json:"effects"`
	}
	out := d.cli(t, "events", "trail", fmt.Sprint(id), "-o", "json")
	if err := json.Unmarshal([]byte(out), &trail); err != nil {
		t.Fatalf("events trail -o json: %v: %s", err, out)
	}
	var kinds []string
	for _, e := range trail.Effects {
		if e.Group != d.prefix+".orders" {
			t.Errorf("trail effect of group %s, want %s.orders", e.Group, d.prefix)
		}
		switch {
		case e.Kind == "projection" && e.State == "placed", e.Kind == "confirmation" && strings.HasSuffix(e.BusinessKey, "/"+order+"/confirm"):
			kinds = append(kinds, e.Kind)
		}
	}
	if slices.Sort(kinds); !slices.Equal(kinds, []string{"confirmation", "projection"}) {
		t.Errorf("trail of %s's event: effects %+v, want its projection (placed) and its confirmation", order, trail.Effects)
	}
}

// deployment is a database of its own and the orders binary's processes
// over it, on topics and a slot of their own.
type deployment struct {
	bin, prefix           string
	env                   []string
	db                    *pgxpool.Pool
	ingestURL, adminURL   string
	ingestAddr, adminAddr string
}

func newDeployment(t *testing.T, bin, effectGroups string) *deployment {
	t.Helper()
	base, brokers := os.Getenv("SLUICE_DATABASE_URL"), os.Getenv("SLUICE_KAFKA_BROKERS")
	if base == "" || brokers == "" {
		t.Fatal("SLUICE_DATABASE_URL and SLUICE_KAFKA_BROKERS name the test services (make up writes them to .run/env)")
	}
	name := "orders_e2e_" + random()
	dbURL := createDatabase(t, base, name)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	d := &deployment{bin: bin, prefix: "ord" + random(), ingestAddr: freeAddr(t), adminAddr: freeAddr(t)}
	d.ingestURL, d.adminURL = "http://"+d.ingestAddr, "http://"+d.adminAddr
	d.env = append(os.Environ(), "SLUICE_DATABASE_URL="+dbURL, "SLUICE_KAFKA_BROKERS="+brokers,
		"SLUICE_SECRET_KEY="+base64.StdEncoding.EncodeToString(key), "SLUICE_TOPIC_PREFIX="+d.prefix, "SLUICE_SLOT="+strings.ReplaceAll(d.prefix, "-", "_"),
		"SLUICE_EFFECT_GROUPS="+effectGroups, "SLUICE_TOPIC_PARTITIONS=3", "SLUICE_LOG_LEVEL=warn",
		"SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8", "SLUICE_DELIVERY_BACKOFF=200ms")
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	d.db = pool
	return d
}

// cli runs a command of the binary and returns its standard output.
func (d *deployment) cli(t *testing.T, args ...string) string {
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

// proc is a long-running process of the deployment.
type proc struct {
	cmd  *exec.Cmd
	out  *bytes.Buffer
	done chan error
}

// start runs a stage, ingest on the deployment's addresses, and waits for
// it to be ready.
func (d *deployment) start(t *testing.T, stage string, extra ...string) *proc {
	t.Helper()
	http, admin := "127.0.0.1:0", freeAddr(t)
	if stage == "ingest" {
		http, admin = d.ingestAddr, d.adminAddr
	}
	cmd := exec.Command(d.bin, append([]string{stage, "--http-addr", http, "--admin-addr", admin, "--no-migrate"}, extra...)...)
	cmd.Env = d.env
	p := &proc{cmd: cmd, out: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		p.done <- nil
		if t.Failed() {
			t.Logf("orders %s:\n%s", stage, p.out)
		}
	})
	eventually(t, time.Minute, "orders "+stage+" to be ready", func() bool {
		resp, err := http2Get("http://" + admin + "/readyz")
		return err == nil && resp == 200
	})
	return p
}

// kill9 kills the process: no drain, no offset commit.
func (p *proc) kill9(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.done <- nil
}

// stop ends the process with SIGTERM and waits: it drains and commits.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		p.done <- nil
	case <-time.After(time.Minute):
		t.Fatal("the process did not stop within a minute of SIGTERM")
	}
}

// endpoint creates a destination of tenant for the types filters take,
// through the admin API with an operate token.
func (d *deployment) endpoint(t *testing.T, tenant, target string, filters ...string) {
	t.Helper()
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(d.cli(t, "admintoken", "create", "--role", "operate", "-o", "json")), &tok); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"url": target, "filters": filters})
	req, _ := http.NewRequest(http.MethodPost, d.adminURL+"/admin/v1/tenants/"+tenant+"/endpoints", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		out, _ := io.ReadAll(resp.Body)
		t.Fatalf("create endpoint: %s %s", resp.Status, out)
	}
}

// state is what the orders group wrote for tenant, as text.
func (d *deployment) state(t *testing.T, tenant string) string {
	t.Helper()
	rows, err := d.db.Query(context.Background(), `
		SELECT o.order_id || ' ' || o.status || ' v' || o.version
		       || ' reserve ' || (SELECT count(*) FROM order_line_operations l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.order_id AND l.operation = 'reserve')
		       || ' release ' || (SELECT count(*) FROM order_line_operations l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.order_id AND l.operation = 'release')
		       || ' confirm ' || (SELECT count(*) FROM order_line_operations l WHERE l.tenant_id = o.tenant_id AND l.order_id = o.order_id AND l.operation = 'confirm')
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

func (d *deployment) waitState(t *testing.T, tenant, want string) {
	t.Helper()
	var got string
	eventually(t, 2*time.Minute, "the orders' effects", func() bool {
		got = d.state(t, tenant)
		return got == want
	})
}

// waitCaughtUp waits until group's lag is zero.
func (d *deployment) waitCaughtUp(t *testing.T, group string) {
	t.Helper()
	eventually(t, 2*time.Minute, group+" to catch up", func() bool {
		for _, g := range d.lag(t) {
			if g.Group == group {
				return g.Lag == 0
			}
		}
		return false
	})
}

type groupLag struct {
	Group string `json:"group"`
	Lag   int64  `json:"lag"`
}

func (d *deployment) lag(t *testing.T) []groupLag {
	t.Helper()
	out := []byte(d.cli(t, "lag", "-o", "json"))
	var list struct {
		Items []groupLag `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		if err := json.Unmarshal(out, &list.Items); err != nil {
			t.Fatalf("lag -o json: %v: %s", err, out)
		}
	}
	return list.Items
}

// lagGroups are the groups lag names, sorted.
func (d *deployment) lagGroups(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, g := range d.lag(t) {
		names = append(names, g.Group)
	}
	slices.Sort(names)
	return names
}

// shop sends signed order events and knows what they must leave.
type shop struct {
	t      *testing.T
	url    string
	status map[string]string // by order: its last status
	n      int
}

// order sends an order placed (twice, and under a second event id), then
// updated and cancelled when asked.
func (s *shop) order(id string, update, cancel bool) {
	s.t.Helper()
	if s.status == nil {
		s.status = map[string]string{}
	}
	lines := `[{"id":"l1","sku":"sku-a","quantity":2},{"id":"l2","sku":"sku-b","quantity":1}]`
	placed := s.event(id+"-placed", "placed", id, 1, lines)
	s.send(placed)
	s.send(placed) // the shop's retry: a duplicate
	s.send(s.event(id+"-placed-again", "placed", id, 1, lines))
	s.status[id] = "placed v1"
	if update {
		s.send(s.event(id+"-updated", "updated", id, 2, lines))
		s.status[id] = "updated v2"
	}
	if cancel {
		s.send(s.event(id+"-cancelled", "cancelled", id, 3, lines))
		s.status[id] = "cancelled v3"
	}
}

func (s *shop) event(eventID, typ, order string, version int, lines string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":"order.%s","order":{"id":%q,"version":%d,"total":%d,"lines":%s}}`,
		eventID, typ, order, version, 1000+version, lines)
}

// send posts body signed as the shop signs it; a 2xx is required.
func (s *shop) send(body []byte) {
	s.t.Helper()
	mac := hmac.New(sha256.New, []byte("shop-secret"))
	mac.Write(body)
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Shop-Signature", hex.EncodeToString(mac.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		s.t.Fatalf("webhook: %s %s", resp.Status, out)
	}
}

// orders are the orders sent.
func (s *shop) orders() int { return len(s.status) }

// expected is the state every order sent must leave: its last status,
// two lines reserved (and released when cancelled), one confirmation, and
// the stock the orders not cancelled hold.
func (s *shop) expected() string {
	var lines []string
	held := 0
	for id, st := range s.status {
		release := 0
		if strings.HasPrefix(st, "cancelled") {
			release = 2
		} else {
			held++
		}
		lines = append(lines, fmt.Sprintf("%s %s reserve 2 release %d confirm 1", id, st, release))
	}
	lines = append(lines, fmt.Sprintf("stock sku-a %d", 1000-2*held), fmt.Sprintf("stock sku-b %d", 1000-held))
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// receiver is the tenant's destination: it answers 204 and keeps what it
// got, by webhook-id.
type receiver struct {
	url string
	mu  sync.Mutex
	ids map[string][]byte
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{ids: map[string][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.ids[req.Header.Get("webhook-id")] = body
		r.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// waitConfirmations waits for n confirmations, each under its own id.
func (r *receiver) waitConfirmations(t *testing.T, n int) {
	t.Helper()
	eventually(t, 2*time.Minute, fmt.Sprintf("%d confirmations at the destination", n), func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.ids) == n
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, body := range r.ids {
		if !bytes.Contains(body, []byte(`"order_id"`)) {
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

func http2Get(u string) (int, error) {
	resp, err := http.Get(u)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
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

// createDatabase makes a database of the test's own on base's server, and
// drops it (and any slot in it) when the test ends.
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
