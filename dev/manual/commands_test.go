package manual_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// The markers a shell block of the manual carries on the line before its
// opening fence. A block a reader would type is either run by
// TestCommandsInTheDocsRun or says why not.
var (
	markRun    = "<!-- test: run -->"
	markNotRun = regexp.MustCompile(`^<!-- test: not run (\(.+\)|yet( .*)?) -->$`)
	// markSetup opens a comment whose lines run before the page's blocks,
	// invisible to readers: what the page assumes was done before.
	markSetup = "<!-- test: setup"
	shellInfo = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
)

// Every shell block of the manual is marked: run by the test, or not run
// and why. A marker with no shell block under it is an error too.
func TestShellBlocksAreMarked(t *testing.T) {
	t.Parallel()
	for _, p := range manual(t) {
		marked := map[int]bool{}
		for _, f := range p.fences() {
			if !shellInfo[f.info] {
				continue
			}
			prev := ""
			if f.line > 0 {
				prev = strings.TrimSpace(p.lines[f.line-1])
			}
			if prev != markRun && !markNotRun.MatchString(prev) {
				t.Errorf("%s:%d: a ```%s block without a marker on the line before it (%s, or <!-- test: not run (why) -->)",
					p.path, f.line+1, f.info, markRun)
			}
			marked[f.line-1] = true
		}
		for i, l := range p.lines {
			l = strings.TrimSpace(l)
			if (l == markRun || markNotRun.MatchString(l)) && !marked[i] {
				t.Errorf("%s:%d: %s is not followed by a shell block", p.path, i+1, l)
			}
		}
	}
}

// script is what a page asks a reader to type: its setup comments, then its
// run blocks, in order, as one bash session.
type script struct {
	page  string
	lines []string
}

func scripts(t *testing.T) []script {
	t.Helper()
	var out []script
	for _, p := range manual(t) {
		s := script{page: p.path}
		for i := 0; i < len(p.lines); i++ {
			if strings.TrimSpace(p.lines[i]) != markSetup {
				continue
			}
			for i++; i < len(p.lines) && strings.TrimSpace(p.lines[i]) != "-->"; i++ {
				s.lines = append(s.lines, p.lines[i])
			}
		}
		for _, f := range p.fences() {
			if shellInfo[f.info] && f.line > 0 && strings.TrimSpace(p.lines[f.line-1]) == markRun {
				s.lines = append(s.lines, expectations(f.body)...)
			}
		}
		if len(s.lines) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// expectation is a command whose trailing comment says what it prints:
// `bin/sluice workspace balance $W   # => 100`.
var expectation = regexp.MustCompile(`^(.*?)\s+# => (.*)$`)

// expectations turns each command that says what it prints into a check of
// it, joining continued lines first.
func expectations(body []string) []string {
	var out []string
	for i := 0; i < len(body); i++ {
		line := body[i]
		for strings.HasSuffix(line, `\`) && i+1 < len(body) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(body[i])
		}
		m := expectation.FindStringSubmatch(line)
		if m == nil {
			out = append(out, line)
			continue
		}
		out = append(out, fmt.Sprintf("__got=$(%s)\nprintf '%%s\\n' \"$__got\"\nif [ \"$__got\" != %s ]; then printf 'the manual says it prints %%s\\n' %s >&2; exit 1; fi",
			m[1], shellQuote(m[2]), shellQuote(m[2])))
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// The commands of the manual's marked blocks run, page by page, as a reader
// would type them after `make run`: in a directory with bin/sluice (also on
// PATH, as `sluice`), dev/ and .run/env, against a `sluice serve` of the test's own (a fresh database,
// topics and slot), whose listeners stand where the page says 127.0.0.1:8080
// and 127.0.0.1:8082, whose broker is the page's 127.0.0.1:9092, and whose topics and groups are named like the page's
// (sluice.credits) under a prefix of its own.
func TestCommandsInTheDocsRun(t *testing.T) {
	scripts := scripts(t)
	if len(scripts) == 0 {
		t.Fatal("no page has a block marked to run")
	}
	env := startServe(t)
	for _, s := range scripts {
		t.Run(s.page, func(t *testing.T) {
			t.Parallel() // each page makes its own tenant
			text := strings.Join(s.lines, "\n")
			text = strings.NewReplacer("127.0.0.1:8080", env.httpAddr, "127.0.0.1:8082", env.adminAddr,
				"127.0.0.1:9092", env.broker).Replace(text)
			text = sluiceName.ReplaceAllString(text, "${1}"+env.prefix+".${2}")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+text)
			cmd.Dir = env.dir
			cmd.Env = append(os.Environ(), "HOME="+env.dir, "PATH="+filepath.Join(env.dir, "bin")+":"+os.Getenv("PATH"))
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			t.Logf("%s printed:\n%s", s.page, out.String()) // shown with -v
			if err != nil {
				t.Errorf("%s: the page's commands failed (%v):\n%s\n--- the commands:\n%s\n--- sluice serve's log (tail):\n%s",
					s.page, err, out.String(), text, env.logTail())
			}
		})
	}
}

// sluiceName is a topic or consumer group name as the manual writes it,
// under the default prefix; the test's pipeline has a prefix of its own.
var sluiceName = regexp.MustCompile(`(^|[^\w.-])sluice\.(credits|subscriptions|installations|verifications|feedback|dispatch|invoices|github|notifications|tenant)\b`)

// serveEnv is where the pages' commands run.
type serveEnv struct {
	dir                 string // holds bin/sluice and .run/env
	httpAddr, adminAddr string
	broker              string // where the page says 127.0.0.1:9092
	prefix              string // of topics and consumer groups
	log                 string
}

func (e serveEnv) logTail() string {
	b, _ := os.ReadFile(e.log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-30):], "\n")
}

// startServe builds bin/sluice, writes .run/env and runs `sluice serve`
// until the test ends, with its slot streaming.
func startServe(t *testing.T) serveEnv {
	t.Helper()
	services := testenv.Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	env := serveEnv{dir: dir, httpAddr: freeAddr(t), adminAddr: freeAddr(t), broker: services.Brokers[0],
		log: filepath.Join(dir, ".run", "sluice.log")}
	if err := os.MkdirAll(filepath.Join(dir, ".run"), 0o755); err != nil {
		t.Fatal(err)
	}
	// dev/ as in a checkout: dev/kafka/bin's Kafka tools find the jars
	// `make up` fetched into the checkout's .run/kafka/libs.
	repo, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, "dev"), filepath.Join(dir, "dev")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "sluice"), "./cmd/sluice")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/sluice: %v\n%s", err, out)
	}
	db, err := services.NewDatabase(ctx, "docs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	secretKey, err := keyring.Generate()
	if err != nil {
		t.Fatal(err)
	}
	suffix := testenv.RandomSuffix()
	prefix, slot := "docs"+suffix+".sluice", "sluice_docs_"+suffix
	env.prefix = prefix
	t.Cleanup(func() { deleteTopics(services.Brokers, prefix+".") })
	vars := []string{
		"SLUICE_DATABASE_URL=" + db.URL,
		"SLUICE_KAFKA_BROKERS=" + strings.Join(services.Brokers, ","),
		"SLUICE_SECRET_KEY=" + secretKey,
		"SLUICE_TOPIC_PREFIX=" + prefix,
		"SLUICE_SLOT=" + slot,
		"SLUICE_HTTP_ADDR=" + env.httpAddr,
		"SLUICE_ADMIN_ADDR=" + env.adminAddr,
	}
	// .run/env as `make up` writes it, with this test's services, so a
	// page's `set -a; . .run/env; set +a` points its commands here.
	if err := os.WriteFile(filepath.Join(dir, ".run", "env"), []byte(strings.Join(vars, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(env.log)
	if err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(filepath.Join(dir, "bin", "sluice"), "serve")
	serve.Dir = dir
	serve.Env = append(os.Environ(), vars...)
	serve.Env = append(serve.Env, "SLUICE_TOPIC_PARTITIONS=3", "SLUICE_RECONCILE=false", "SLUICE_LOG_LEVEL=warn")
	serve.Stdout, serve.Stderr = logFile, logFile
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = serve.Process.Signal(syscall.SIGTERM)
		_ = serve.Wait()
		logFile.Close()
	})
	testenv.Eventually(t, time.Minute, "sluice serve ready on its admin listener", func() (bool, error) {
		if serve.ProcessState != nil {
			return false, fmt.Errorf("sluice serve exited: %s", env.logTail())
		}
		resp, err := http.Get("http://" + env.adminAddr + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	// Rows committed before the slot exists would never be streamed.
	conn, err := pgx.Connect(ctx, db.URL)
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
