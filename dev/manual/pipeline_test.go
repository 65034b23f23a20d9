package manual_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A pipeline runs as one `sluice serve`, which the pages share, or, for a
// page that stops a stage, as one process per stage: `sluice ingest` on the
// page's public listener, `sluice cdc` on its admin listener (its Kafka
// client serves the consumer-group routes), `sluice consume`.
var (
	oneProcess = []stage{{name: "serve", public: true, admin: true}}
	perStage   = []stage{{name: "ingest", public: true}, {name: "cdc", admin: true}, {name: "consume"}}
)

// stage is one process of a pipeline: its command, and whether it listens
// where .run/env's SLUICE_INGEST_URL (public) and SLUICE_ADMIN_URL (admin)
// say.
type stage struct {
	name          string
	public, admin bool
}

// serveEnv is where a page's commands run.
type serveEnv struct {
	dir                 string // holds bin/sluice, .run/env and, per stage, .run/<stage>.pid and .log
	httpAddr, adminAddr string
	prefix              string // of topics and consumer groups
	stages              []stage
}

func (e serveEnv) logTail() string {
	var out []string
	for _, s := range e.stages {
		b, _ := os.ReadFile(filepath.Join(e.dir, ".run", s.name+".log"))
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		out = append(out, "sluice "+s.name+":")
		out = append(out, lines[max(0, len(lines)-30):]...)
	}
	return strings.Join(out, "\n")
}

// buildSluice builds bin/sluice once for every pipeline and page.
func buildSluice(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "sluice"), "./cmd/sluice")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sluice: %v\n%s", err, out)
	}
	return bin
}

// checkout is a directory laid out as a checkout after make up and make
// build, for one pipeline of its own: bin/ (this test's build), dev/, and
// .run/env naming a fresh database, topics under a prefix of their own, a
// slot of their own, and listeners on free ports (never 8080 and 8082),
// with their URLs, as make up writes them.
type checkout struct {
	dir                 string
	httpAddr, adminAddr string
	prefix, slot        string
	databaseURL         string
	vars                []string // .run/env's lines
}

func newCheckout(t *testing.T, bin, name string, extra ...string) checkout {
	t.Helper()
	services := testenv.Require(t)
	c := checkout{dir: t.TempDir(), httpAddr: freeAddr(t), adminAddr: freeAddr(t)}
	if err := os.MkdirAll(filepath.Join(c.dir, ".run"), 0o755); err != nil {
		t.Fatal(err)
	}
	// bin/ and dev/ as in a checkout: dev/kafka/bin's Kafka tools find the
	// jars `make up` fetched into the checkout's .run/kafka/libs.
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"bin": bin, "dev": filepath.Join(repo, "dev")} {
		if err := os.Symlink(target, filepath.Join(c.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	db, err := services.NewDatabase(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	c.databaseURL = db.URL
	secretKey, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	suffix := testenv.RandomSuffix()
	c.prefix, c.slot = name+suffix+".sluice", "sluice_"+name+"_"+suffix
	t.Cleanup(func() { deleteTopics(services.Brokers, c.prefix+".") })
	c.vars = append([]string{
		"SLUICE_DATABASE_URL=" + db.URL,
		"SLUICE_KAFKA_BROKERS=" + strings.Join(services.Brokers, ","),
		"SLUICE_SECRET_KEY=" + secretKey,
		"SLUICE_TOPIC_PREFIX=" + c.prefix,
		"SLUICE_SLOT=" + c.slot,
		"SLUICE_HTTP_ADDR=" + c.httpAddr,
		"SLUICE_ADMIN_ADDR=" + c.adminAddr,
		"SLUICE_INGEST_URL=http://" + c.httpAddr,
		"SLUICE_ADMIN_URL=http://" + c.adminAddr,
	}, extra...)
	// .run/env as `make up` writes it, with this pipeline's services, so a
	// page's `set -a; . .run/env; set +a` points its commands here.
	if err := os.WriteFile(filepath.Join(c.dir, ".run", "env"), []byte(strings.Join(c.vars, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// startPipeline writes .run/env and runs the stages until the test ends,
// on a fresh database, topics under a prefix of their own and a slot of
// their own, which streams before it returns.
func startPipeline(t *testing.T, bin string, stages []stage) serveEnv {
	t.Helper()
	ctx := context.Background()
	c := newCheckout(t, bin, "docs")
	env := serveEnv{dir: c.dir, httpAddr: c.httpAddr, adminAddr: c.adminAddr, prefix: c.prefix, stages: stages}
	vars, slot := c.vars, c.slot
	type started struct {
		stage
		adminAddr string
		exited    <-chan struct{}
	}
	var running []started
	for _, s := range stages {
		httpAddr, adminAddr := env.httpAddr, env.adminAddr
		if !s.public {
			httpAddr = freeAddr(t)
		}
		if !s.admin {
			adminAddr = freeAddr(t)
		}
		exited := env.start(t, s, append(vars, "SLUICE_HTTP_ADDR="+httpAddr, "SLUICE_ADMIN_ADDR="+adminAddr))
		running = append(running, started{s, adminAddr, exited})
	}
	for _, s := range running {
		testenv.Eventually(t, time.Minute, "sluice "+s.name+" ready on its admin listener", func() (bool, error) {
			select {
			case <-s.exited:
				return false, fmt.Errorf("sluice %s exited: %s", s.name, env.logTail())
			default:
			}
			resp, err := http.Get("http://" + s.adminAddr + "/readyz")
			if err != nil {
				return false, err
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, nil
		})
	}
	// Rows committed before the slot exists would never be streamed.
	conn, err := pgx.Connect(ctx, c.databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	testenv.Eventually(t, time.Minute, "the relay streaming from its slot", func() (bool, error) {
		var ready bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM cdc_slots c JOIN pg_replication_slots s
			ON s.slot_name = c.slot WHERE c.slot = $1 AND s.active)`, slot).Scan(&ready)
		return ready, err
	})
	return env
}

// start runs one stage until the test ends, its pid in .run/<stage>.pid
// (a page stops it with `kill $(cat .run/consume.pid)`), and returns a
// channel closed once it exited (it is reaped at once, so a page can wait
// for it to be gone).
func (e serveEnv) start(t *testing.T, s stage, vars []string) <-chan struct{} {
	t.Helper()
	log, err := os.Create(filepath.Join(e.dir, ".run", s.name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	p := exec.Command(filepath.Join(e.dir, "bin", "sluice"), s.name)
	p.Dir = e.dir
	p.Env = append(append(os.Environ(), vars...), "SLUICE_TOPIC_PARTITIONS=3", "SLUICE_RECONCILE=false", "SLUICE_LOG_LEVEL=warn")
	p.Stdout, p.Stderr = log, log
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = p.Wait()
		log.Close()
		close(exited)
	}()
	if err := os.WriteFile(filepath.Join(e.dir, ".run", s.name+".pid"), []byte(strconv.Itoa(p.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = p.Process.Signal(syscall.SIGTERM)
			<-exited
		}
	})
	return exited
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

func deleteTopics(brokers []string, prefix string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		return
	}
	defer cl.Close()
	_ = kafka.DeleteTopicsWithPrefix(context.Background(), kadm.NewClient(cl), prefix)
}
