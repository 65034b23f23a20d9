package manual_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// make run, as the README tells a newcomer to type it, on ports other than
// the defaults: its demo gives every page of the console content (a
// conflict, a dead letter, a reconciliation run, an event type, an
// endpoint and a delivery with a failed attempt and a successful one), and
// no process it starts contacts anything but this machine's loopback, nor
// asks a DNS server anything.
//
// Every connect(2) of every process of the run (run.sh, sluice serve, each
// bin/sluice command, the demo's fakes, curl, psql) is recorded by strace:
// a name lookup over the network is a connect to a name server (port 53),
// whatever resolver made it (Go's, glibc's), and any other address is a
// dial. This watches the processes from outside, as they run for a user,
// with no hook in Sluice's code; pointing their resolver at one that
// fails every lookup would need a mount namespace to give them another
// resolv.conf.
func TestMakeRunShowsEveryConsolePageOnLoopbackOnly(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is needed to watch make run's connections: apt-get install strace (make test installs it)")
	}
	dir := makeRunCheckout(t)
	trace := filepath.Join(t.TempDir(), "connect.trace")
	cmd := exec.Command("strace", "-f", "-qq", "--seccomp-bpf", "-Y", "-e", "trace=connect,sendto,sendmsg", "-o", trace,
		"bash", filepath.Join(dir, "dev", "run.sh"))
	cmd.Dir = dir
	cmd.Env = append(withoutSluice(os.Environ()), "HOME="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &lockedBuffer{}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	// However the test ends, nothing it started outlives it: Ctrl-C, as a
	// user stops make run, then SIGKILL to the whole group.
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	running := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "Sluice is running") {
				close(running)
			}
		}
	}()
	go func() { exited <- cmd.Wait(); close(exited) }()
	select {
	case <-running:
	case err := <-exited:
		t.Fatalf("make run's script ended (%v) before the demo did:\n%s", err, out)
	case <-time.After(6 * time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("make run's demo not done after 6 minutes:\n%s", out)
	}
	demo := readDemoState(t, dir)
	console := consoleClient{url: envOf(t, dir, "SLUICE_ADMIN_URL"), token: demo.ConsoleToken}
	t.Run("the console's pages have content", func(t *testing.T) { console.hasContent(t, demo) })
	// Ctrl-C: run.sh stops serve and the fakes.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Errorf("make run's script still running a minute after Ctrl-C")
	}
	dials, lookups := offLoopback(t, trace)
	if len(dials)+len(lookups) > 0 {
		t.Errorf("make run dialled off loopback %d times and asked a name server %d times:\n%s\n%s",
			len(dials), len(lookups), strings.Join(dials, "\n"), strings.Join(lookups, "\n"))
	}
	if t.Failed() {
		t.Logf("make run printed:\n%s", out)
	}
}

// makeRunCheckout is a directory laid out as a checkout after make up and
// make build: bin/ (this test's build), dev/, and .run/env naming a fresh
// database, topics and a slot of its own, and listeners on free ports (not
// 8080 and 8082).
func makeRunCheckout(t *testing.T) string {
	t.Helper()
	c := newCheckout(t, buildSluice(t), "run", "SLUICE_TOPIC_PARTITIONS=3",
		"SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8,::1/128")
	// The demo's fakes, built as make run builds them (run.sh finds them
	// up to date), so the traced run times the pipeline, not the compiler.
	build := exec.Command("go", "build", "-o", filepath.Join(c.dir, ".run", "bin", "demo"), "./dev/demo")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./dev/demo: %v\n%s", err, out)
	}
	return c.dir
}

// demoState is what the demo keeps in .run/demo/demo.json.
type demoState struct {
	TenantID     string `json:"tenant_id"`
	SourceID     string `json:"source_id"`
	EndpointID   string `json:"endpoint_id"`
	ConsoleToken string `json:"console_token"`
}

func readDemoState(t *testing.T, dir string) demoState {
	t.Helper()
	var d demoState
	b, err := os.ReadFile(filepath.Join(dir, ".run", "demo", "demo.json"))
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil || d.TenantID == "" || d.ConsoleToken == "" {
		t.Fatalf(".run/demo/demo.json: %v %+v", err, d)
	}
	return d
}

func envOf(t *testing.T, dir, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, ".run", "env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, key+"="); ok {
			return v
		}
	}
	t.Fatalf(".run/env has no %s", key)
	return ""
}

// consoleClient reads the admin API the console's pages are made of, with
// the operate token make run printed for the console.
type consoleClient struct{ url, token string }

func (c consoleClient) get(path string, v any) error {
	req, err := http.NewRequest(http.MethodGet, c.url+"/admin/v1"+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return json.Unmarshal(b, v)
}

// listPage is one page of a list the admin API answers.
type listPage struct {
	Items []json.RawMessage `json:"items"`
}

// hasContent waits until each page the console has shows the demo: its
// conflict, its dead letter, its reconciliation run, its event type, its
// endpoint, and a delivery whose first attempt failed and whose retry was
// accepted (the receiver refuses its first request; the retry comes after
// the deliverer's backoff).
func (c consoleClient) hasContent(t *testing.T, d demoState) {
	t.Helper()
	for _, p := range []struct{ what, path string }{
		{"conflicts", "/conflicts?tenant_id=" + d.TenantID},
		{"dead letters", "/dead-letters?tenant_id=" + d.TenantID},
		{"reconciliation runs", "/reconcile/runs?source_id=" + d.SourceID},
		{"event types", "/tenants/" + d.TenantID + "/event-types"},
		{"endpoints", "/tenants/" + d.TenantID + "/endpoints"},
	} {
		testenv.Eventually(t, time.Minute, "the console's "+p.what, func() (bool, error) {
			var got listPage
			err := c.get(p.path, &got)
			return err == nil && len(got.Items) > 0, err
		})
	}
	testenv.Eventually(t, 2*time.Minute, "a delivery with a failed attempt and a successful one", func() (bool, error) {
		var deliveries struct {
			Items []struct {
				ID int64 `json:"id"`
			} `json:"items"`
		}
		if err := c.get("/deliveries?tenant_id="+d.TenantID, &deliveries); err != nil {
			return false, err
		}
		for _, item := range deliveries.Items {
			var one struct {
				History []struct {
					Status int `json:"status"`
				} `json:"history"`
			}
			if err := c.get("/deliveries/"+strconv.FormatInt(item.ID, 10), &one); err != nil {
				return false, err
			}
			failed, succeeded := false, false
			for _, a := range one.History {
				failed = failed || a.Status == http.StatusServiceUnavailable
				succeeded = succeeded || a.Status/100 == 2
			}
			if failed && succeeded {
				return true, nil
			}
		}
		return false, nil
	})
}

// socketAddress is an IPv4 or IPv6 address strace decoded in a call: its
// port, and the address.
var socketAddress = regexp.MustCompile(`sa_family=AF_INET6?, sin6?_port=htons\((\d+)\),.*?(?:inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)")`)

// offLoopback reads strace's record: the connections to an address off
// loopback, and those to a name server's port (a lookup, even one a local
// resolver would answer).
func offLoopback(t *testing.T, trace string) (dials, lookups []string) {
	t.Helper()
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		m := socketAddress.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		seen++
		addr, err := netip.ParseAddr(m[2] + m[3])
		switch {
		case m[1] == "53":
			lookups = append(lookups, line)
		case err != nil || !addr.Unmap().IsLoopback():
			dials = append(dials, line)
		}
	}
	if seen == 0 {
		t.Errorf("strace recorded no connection at all: the trace is not what this test reads")
	}
	return dials, lookups
}

// lockedBuffer collects what the run prints, from two goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) WriteString(s string) {
	_, _ = l.Write([]byte(s))
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
