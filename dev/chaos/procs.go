package main

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/dev/procfs"
)

// proc is one running sluice process.
type proc struct {
	name string // instance name, e.g. "relay-a"
	pid  int
	done chan struct{}
}

// fleet starts, kills and restarts the sluice processes of a run, always
// through the same start path a deployment uses (`sluice <stage>` with its
// environment), and keeps each stage's peak RSS across restarts.
type fleet struct {
	bin    string
	logDir string
	env    []string

	mu    sync.Mutex
	procs map[string]*proc
	specs map[string]procSpec
	peak  map[string]int64 // bytes, per instance name, across restarts
	kills map[string]int
	// starts counts each stage's starts, the first ones included.
	starts map[string]int
}

// procSpec says how to start one instance.
type procSpec struct {
	stage string   // ingest, cdc, consume
	addr  string   // its HTTP listener
	env   []string // on top of the fleet's (later values win)
	bin   string   // the sluice binary; empty: the fleet's (the working tree's build)
}

func newFleet(bin, logDir string, env []string) *fleet {
	return &fleet{bin: bin, logDir: logDir, env: env, procs: map[string]*proc{}, specs: map[string]procSpec{},
		peak: map[string]int64{}, kills: map[string]int{}, starts: map[string]int{}}
}

// start runs instance name and waits until it answers readyPath with 2xx
// (/readyz; /healthz for a relay that may be the standby).
func (f *fleet) start(ctx context.Context, name string, spec procSpec, readyPath string) error {
	lf, err := os.OpenFile(fmt.Sprintf("%s/%s.log", f.logDir, name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	bin := cmp.Or(spec.bin, f.bin)
	fmt.Fprintf(lf, "\n==== chaos: start %s (%s) at %s\n", name, bin, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(bin, spec.stage)
	cmd.Env = append(append(append(os.Environ(), f.env...), spec.env...), "SLUICE_HTTP_ADDR="+spec.addr, "SLUICE_ADMIN_ADDR=127.0.0.1:0")
	// A driver that dies (Ctrl-C, a bug) takes its stages with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = lf, lf
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	go f.sampleRSS(p)
	f.mu.Lock()
	f.procs[name], f.specs[name] = p, spec
	f.starts[spec.stage]++
	f.mu.Unlock()
	return poll(ctx, 90*time.Second, name+" "+readyPath, func() (bool, error) {
		select {
		case <-p.done:
			return false, fmt.Errorf("%s exited at start; see %s/%s.log", name, f.logDir, name)
		default:
		}
		return httpOK("http://" + spec.addr + readyPath), nil
	})
}

// restart starts a stopped instance again with its spec.
func (f *fleet) restart(ctx context.Context, name, readyPath string) error {
	f.mu.Lock()
	spec := f.specs[name]
	f.mu.Unlock()
	return f.start(ctx, name, spec, readyPath)
}

// replace stops instance name as a deployment does (SIGTERM: it drains),
// then starts it again from binary bin, and waits until it answers
// readyPath.
func (f *fleet) replace(ctx context.Context, name, bin, readyPath string) error {
	f.mu.Lock()
	p, spec := f.procs[name], f.specs[name]
	f.mu.Unlock()
	if p != nil {
		f.drain(p)
	}
	spec.bin = bin
	return f.start(ctx, name, spec, readyPath)
}

// drain stops p with SIGTERM, SIGKILL after 30 s.
func (f *fleet) drain(p *proc) {
	_ = syscall.Kill(p.pid, syscall.SIGCONT)
	_ = syscall.Kill(p.pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
		<-p.done
	}
}

func httpOK(url string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2
}

// ready reports whether instance name answers /readyz (a relay: leads).
func (f *fleet) ready(name string) bool {
	f.mu.Lock()
	spec := f.specs[name]
	f.mu.Unlock()
	return httpOK("http://" + spec.addr + "/readyz")
}

// kill sends SIGKILL and waits for the process to be gone.
func (f *fleet) kill(name string) {
	f.mu.Lock()
	p := f.procs[name]
	f.kills[f.specs[name].stage]++
	f.mu.Unlock()
	if p == nil {
		return
	}
	_ = syscall.Kill(p.pid, syscall.SIGKILL)
	<-p.done
}

// pause stops instance name for d (SIGSTOP), then lets it go on.
func (f *fleet) pause(ctx context.Context, name string, d time.Duration, stopped func()) {
	f.mu.Lock()
	p := f.procs[name]
	f.mu.Unlock()
	if p == nil {
		return
	}
	_ = syscall.Kill(p.pid, syscall.SIGSTOP)
	stopped()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	_ = syscall.Kill(p.pid, syscall.SIGCONT)
}

// alive reports whether instance name runs.
func (f *fleet) alive(name string) bool {
	f.mu.Lock()
	p := f.procs[name]
	f.mu.Unlock()
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// stopAll drains every process with SIGTERM, SIGKILL after 30 s.
func (f *fleet) stopAll() {
	f.mu.Lock()
	procs := make([]*proc, 0, len(f.procs))
	for _, p := range f.procs {
		procs = append(procs, p)
	}
	f.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.drain(p)
		}()
	}
	wg.Wait()
}

// sampleRSS keeps the instance's peak resident set (VmHWM) until it exits.
func (f *fleet) sampleRSS(p *proc) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			if rss := procfs.PeakRSS(p.pid); rss > 0 {
				f.mu.Lock()
				f.peak[p.name] = max(f.peak[p.name], rss)
				f.mu.Unlock()
			}
		}
	}
}

// poll checks cond every 100 ms until it holds or timeout passes: checks
// wait on what Postgres and Kafka show, never on a sleep.
func poll(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s (last error: %v)", timeout, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
