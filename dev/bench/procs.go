package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/dev/procfs"
)

// proc is a process the bench started (a sluice stage or the null server).
type proc struct {
	name string
	cmd  *exec.Cmd
	addr string
	// ops serves /metrics and profiles: the admin listener, or addr for a
	// build from before there was one (BENCH_SLUICE).
	ops string
	log string

	mu      sync.Mutex
	peakRSS int64 // bytes, sampled (VmHWM would miss nothing but is per process lifetime; both agree at the end)
	// peakAnon is the highest anonymous RSS sampled, in bytes: what Go's
	// memory limit bounds (RSS adds the executable's file-backed pages).
	peakAnon int64
	stop     chan struct{}
	done     chan struct{}
}

// start runs bin with args and env, waits until admin answers /readyz (or,
// for a build without an admin listener, addr answers readyPath).
func start(name, bin string, args []string, env []string, addr, admin, readyPath, logDir string) (*proc, error) {
	// Readiness is asked over HTTP: another process on the port would answer
	// for ours and the bench would measure it.
	for _, a := range []string{addr, admin} {
		if a == "" {
			continue
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return nil, fmt.Errorf("start %s: %s is taken by another process: %w", name, a, err)
		}
		ln.Close()
	}
	logPath := fmt.Sprintf("%s/%s.log", logDir, name)
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	// A bench that dies (Ctrl-C, timeout) takes its stages with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, addr: addr, ops: addr, log: logPath, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	go p.sampleRSS()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if ready, listening := answers(admin, "/readyz"); ready {
			p.ops = admin
			return p, nil
		} else if !listening {
			resp, err := http.Get("http://" + addr + readyPath)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					return p, nil
				}
				if resp.StatusCode == http.StatusNotFound && readyPath != "/readyz" {
					readyPath = "/readyz" // a build from before /readyz/stages (BENCH_SLUICE)
				}
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("%s exited at start; see %s", name, logPath)
		default:
		}
		if time.Now().After(deadline) {
			p.terminate()
			return nil, fmt.Errorf("%s not ready after 60s; see %s", name, logPath)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *proc) sampleRSS() {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.done:
			return
		case <-t.C:
			if rss := procfs.PeakRSS(p.cmd.Process.Pid); rss > 0 {
				anon := procfs.AnonRSS(p.cmd.Process.Pid)
				p.mu.Lock()
				p.peakRSS, p.peakAnon = max(p.peakRSS, rss), max(p.peakAnon, anon)
				p.mu.Unlock()
			}
		}
	}
}

// peak is the process's peak resident set size in MiB so far.
func (p *proc) peak() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return float64(p.peakRSS) / (1 << 20)
}

// peakAnonRSS is the highest anonymous RSS sampled so far, in MiB.
func (p *proc) peakAnonRSS() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return float64(p.peakAnon) / (1 << 20)
}

// terminate sends SIGTERM (a graceful drain) and waits.
func (p *proc) terminate() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// waitFor polls cond every 50ms until it holds or the deadline passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	return waitEvery(ctx, timeout, 50*time.Millisecond, what, cond)
}

// waitEvery is waitFor polling every interval: a cond that reads a stage's
// /metrics costs the stage a millisecond or two of CPU each time.
func waitEvery(ctx context.Context, timeout, interval time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err == nil && ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s (last error %v)", timeout, what, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// answers says whether addr serves path with a 2xx, and whether anything
// listens there at all. A build that binds an admin listener binds it
// before it serves anything, so a public port answering while nothing
// listens on the admin one is a build without one.
func answers(addr, path string) (ready, listening bool) {
	if addr == "" {
		return false, false
	}
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		var op *net.OpError
		return false, !errors.As(err, &op) || op.Op != "dial"
	}
	resp.Body.Close()
	return resp.StatusCode/100 == 2, true
}
