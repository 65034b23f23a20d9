package effecttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Process is an effect group run as a program of its own, written in any
// language against Sluice's Kafka record format (docs/any-language.md).
// The kit starts it for each run a scenario needs, tells it what to read
// and where to write in its environment, stops it with SIGTERM, and reads
// what it left in Postgres and its consumer group's offsets in Kafka: the
// same scenarios and checks as a Go group's.
//
// Besides applying records, the program honours a run's hooks
// (ProcessRun): its batch size, a crash between its effects' commit and
// its offsets', transient failures of its first transactions, and a line
// per transaction attempt in the file named by Attempts.
type Process struct {
	// Name names the group in the kit's topics and group ids: lowercase
	// letters, digits, '-' and '_'.
	Name string
	// Command is the program and its arguments, run without a shell.
	Command []string
	// Dir is its working directory; "": the test's.
	Dir string
	// Env is what the program is told of one run, as KEY=value entries
	// added to the test's own environment, in the names the program
	// reads.
	Env func(r ProcessRun) []string
	// DeadLetters is a query of the records the program set aside for
	// good, as consumer group $1: a row per record, its partition (int),
	// offset (bigint) and reason (text).
	DeadLetters string
}

// ProcessRun is one run of a Process, as its environment tells it.
type ProcessRun struct {
	// Topic is the one topic to read, and Group the Kafka consumer group
	// id to read it as and commit its offsets under (the kit waits on
	// them, as lag tools do).
	Topic, Group string
	// Prefix is the topic prefix of what the program publishes through
	// the outbox: its intents go to <Prefix>.notifications.
	Prefix string
	// DatabaseURL is the kit's database (Sluice's schema and the suite's
	// migrations); Brokers the Kafka bootstrap servers, comma-separated.
	DatabaseURL, Brokers string
	// MaxBatch, when above 0, is the most records one transaction
	// applies.
	MaxBatch int
	// CrashAfterCommit: right after its first transaction of effects
	// committed, and before any offset commit, the program exits at once
	// (no cleanup, no offset commit: a kill -9 there). The kit then starts
	// it again in the same group.
	CrashAfterCommit bool
	// FailFirst: its first FailFirst transactions fail just before their
	// commit, as a transient failure (a dependency down), and are retried.
	FailFirst int
	// Attempts is a file the program appends a line to after each
	// transaction attempt, a JSON object: {"committed":true} once it
	// committed, else {"committed":false,"sqlstate":"55P03","error":"..."}
	// with the SQLSTATE of a Postgres error ("" for any other).
	Attempts string
}

// check says whether p can run.
func (p *Process) check() error {
	if !processName.MatchString(p.Name) {
		return fmt.Errorf("effecttest: process %q: a name of lowercase letters, digits, '-' and '_'", p.Name)
	}
	if len(p.Command) == 0 || p.Env == nil || p.DeadLetters == "" {
		return fmt.Errorf("effecttest: process %s: a Command, an Env and a DeadLetters query are needed", p.Name)
	}
	return nil
}

// processName is what Process.Name may be: an effect.Group's names.
var processName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// contenders is how many programs a scenario of contending batches runs
// in one group: each applies one transaction at a time.
const contenders = 3

// processes are the programs of one run of a Process: one, or several in
// one group for contending batches.
type processes struct {
	p     *Process
	b     *bundle
	id    string
	procs []*proc
}

// proc is one program started.
type proc struct {
	cmd      *exec.Cmd
	out      string // the file its output goes to
	attempts string
	done     chan struct{}
	err      error // once done
	mu       sync.Mutex
	expected bool // its exit was asked for (a stop or its crash)
}

// startProcesses starts the suite's program for a run of a scenario.
func startProcesses(t *testing.T, b *bundle, s Suite, o options) *processes {
	t.Helper()
	ps := &processes{p: s.Process, b: b, id: o.group}
	if ps.id == "" {
		ps.id = groupID(b, s)
	}
	n := 1
	if o.contend {
		n = contenders
	}
	for i := range n {
		ps.procs = append(ps.procs, ps.start(t, o, i))
	}
	return ps
}

func (ps *processes) start(t *testing.T, o options, i int) *proc {
	t.Helper()
	run := ProcessRun{Topic: ps.b.topic, Group: ps.id, Prefix: ps.b.topic, DatabaseURL: ps.b.env.DB.URL,
		Brokers: strings.Join(ps.b.env.Brokers, ","), MaxBatch: o.maxBatch, CrashAfterCommit: o.crash, FailFirst: o.failFirst,
		Attempts: filepath.Join(t.TempDir(), fmt.Sprintf("attempts-%d.jsonl", i))}
	cmd := exec.Command(ps.p.Command[0], ps.p.Command[1:]...)
	cmd.Dir = ps.p.Dir
	cmd.Env = append(os.Environ(), ps.p.Env(run)...)
	// A file, not a buffer: the program writes to it directly, with no
	// copying goroutine to race with the test's reads.
	out, err := os.Create(filepath.Join(filepath.Dir(run.Attempts), fmt.Sprintf("output-%d.txt", i)))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	p := &proc{cmd: cmd, out: out.Name(), attempts: run.Attempts, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("effecttest: start %s: %v", ps.p.Command[0], err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s (group %s) wrote:\n%s", strings.Join(ps.p.Command, " "), ps.id, p.output())
		}
	})
	return p
}

// output is what the program wrote so far.
func (p *proc) output() string {
	b, _ := os.ReadFile(p.out)
	return string(b)
}

func (p *proc) kill() {
	p.mu.Lock()
	p.expected = true
	p.mu.Unlock()
	_ = p.cmd.Process.Kill()
	<-p.done
}

// died is the error of a program that exited unasked, nil while it runs
// or when its exit was asked for.
func (p *proc) died() error {
	select {
	case <-p.done:
	default:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.expected {
		return nil
	}
	return fmt.Errorf("the program exited on its own (%v):\n%s", p.err, p.output())
}

func (ps *processes) ID() string { return ps.id }

// eventually is testenv.Eventually, failing at once when a program dies.
func (ps *processes) eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	testenv.Eventually(t, timeout, what, func() (bool, error) {
		for _, p := range ps.procs {
			if err := p.died(); err != nil {
				t.Fatalf("effecttest: waiting for %s: %v", what, err)
			}
		}
		return cond()
	})
}

func (ps *processes) WaitCommitted(t *testing.T, timeout time.Duration, recs ...*kgo.Record) {
	t.Helper()
	ps.eventually(t, timeout, "group "+ps.id+" to commit past the records", func() (bool, error) {
		return consumertest.CommittedPast(ps.b.env.Admin, ps.id, recs...)
	})
}

func (ps *processes) WaitAttempt(t *testing.T, what string) {
	t.Helper()
	ps.eventually(t, time.Minute, what, func() (bool, error) {
		as, err := ps.attempts()
		return len(as) > 0, err
	})
}

// WaitCrashed waits for the program to exit by itself, as its crash hook
// says, after a transaction committed.
func (ps *processes) WaitCrashed(t *testing.T) {
	t.Helper()
	p := ps.procs[0]
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		t.Fatalf("effecttest: the program did not crash within a minute of starting:\n%s", p.output())
	}
	p.mu.Lock()
	p.expected = true
	p.mu.Unlock()
	as, err := ps.attempts()
	if err != nil {
		t.Fatal(err)
	}
	committed := false
	for _, a := range as {
		committed = committed || a.Committed
	}
	if !committed {
		t.Fatalf("effecttest: the program exited (%v) before any transaction committed, not between the two commits:\n%s", p.err, p.output())
	}
}

// Stop sends each program SIGTERM and waits for it to drain and exit 0.
func (ps *processes) Stop(t *testing.T) {
	t.Helper()
	for _, p := range ps.procs {
		if err := p.died(); err != nil {
			t.Fatalf("effecttest: %v", err)
		}
		p.mu.Lock()
		p.expected = true
		p.mu.Unlock()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range ps.procs {
		select {
		case <-p.done:
		case <-time.After(time.Minute):
			t.Fatalf("effecttest: the program did not stop within a minute of SIGTERM:\n%s", p.output())
		}
		if p.err != nil {
			t.Errorf("effecttest: the program stopped with %v after SIGTERM:\n%s", p.err, p.output())
		}
	}
}

func (ps *processes) Failures(t *testing.T) (failed, onLocks int) {
	t.Helper()
	as, err := ps.attempts()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if !a.Committed {
			failed++
			if lockCode(a.SQLState) || strings.Contains(a.Error, "lock timeout") {
				onLocks++
			}
		}
	}
	return failed, onLocks
}

func (ps *processes) DeadLetters(t *testing.T) []deadLetter {
	t.Helper()
	return readDeadLetters(t, ps.b.env.Pool, ps.p.DeadLetters, ps.id)
}

// attempt is a line of a program's Attempts file.
type attempt struct {
	Committed bool   `json:"committed"`
	SQLState  string `json:"sqlstate"`
	Error     string `json:"error"`
}

// attempts reads every program's Attempts file; a last line not ended yet
// is read next time.
func (ps *processes) attempts() ([]attempt, error) {
	var all []attempt
	for _, p := range ps.procs {
		data, err := os.ReadFile(p.attempts)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(bytes.NewReader(data[:bytes.LastIndexByte(data, '\n')+1]))
		for sc.Scan() {
			var a attempt
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				return nil, fmt.Errorf("effecttest: %s: a line that is no attempt: %q: %w", p.attempts, sc.Text(), err)
			}
			all = append(all, a)
		}
	}
	return all, nil
}
