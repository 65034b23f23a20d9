package procfs

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// This process reads its own figures, and a child's parent is this process.
func TestReadsAProcessAndItsChildren(t *testing.T) {
	t.Parallel()
	buf := make([]byte, 32<<20)
	for i := range buf {
		buf[i] = 1 // touched, so resident
	}
	if rss := PeakRSS(os.Getpid()); rss < 32<<20 {
		t.Errorf("peak RSS %d, want at least the 32 MiB touched", rss)
	}
	if anon := AnonRSS(os.Getpid()); anon < 32<<20 {
		t.Errorf("anonymous RSS %d, want at least the 32 MiB touched", anon)
	}
	_ = buf[len(buf)-1]
	for i := 0; CPU(os.Getpid(), false) == 0 && i < 1e8; i++ {
	}
	if CPU(os.Getpid(), false) == 0 {
		t.Error("no CPU time read for a busy process")
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if Parent(cmd.Process.Pid) != os.Getpid() {
		t.Errorf("parent of the child = %d, want %d", Parent(cmd.Process.Pid), os.Getpid())
	}
	found := false
	for _, c := range Children(os.Getpid()) {
		found = found || c == cmd.Process.Pid
	}
	if !found {
		t.Error("the child is not among this process's children")
	}
	if PeakRSS(-1) != 0 || AnonRSS(-1) != 0 || CPU(-1, true) != 0 || Parent(-1) != 0 {
		t.Error("a process that does not exist reads as non-zero")
	}
}

// A thread's CPU is found under its name, and the threads add up to at most
// the process's total, read after them (exited threads count only there).
func TestThreadCPUSplitsTheProcessByThreadName(t *testing.T) {
	t.Parallel()
	sum := func(threads map[string]time.Duration) (d time.Duration) {
		for _, t := range threads {
			d += t
		}
		return d
	}
	// Busy until the threads have twenty ticks between them: the kernel
	// counts in ticks and scales each thread's and the process's own split
	// apart, so the sums may differ by a tick or two; over twenty that is
	// noise, while a thread counted twice or missed is not.
	threads := ThreadCPU(os.Getpid())
	for deadline := time.Now().Add(10 * time.Second); sum(threads) < 200*time.Millisecond && time.Now().Before(deadline); {
		for i := 0; i < 1e6; i++ {
		}
		threads = ThreadCPU(os.Getpid())
	}
	if _, ok := threads["procfs.test"]; !ok {
		t.Errorf("no thread named after the test binary in %v", threads)
	}
	const slack = 30 * time.Millisecond
	if total := CPU(os.Getpid(), false); sum(threads) < 200*time.Millisecond || sum(threads) > total+slack || sum(threads) < total/2 {
		t.Errorf("threads sum to %s, process used %s", sum(threads), total)
	}
	if len(ThreadCPU(1<<30)) != 0 {
		t.Error("a process that is gone has threads")
	}
}

// The machine has been busy some of the time it has been up, never more.
func TestReadsTheMachinesCPU(t *testing.T) {
	busy, all := Machine()
	if busy <= 0 || all <= busy {
		t.Fatalf("machine CPU busy %v of %v", busy, all)
	}
}
