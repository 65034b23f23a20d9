// Package procfs reads what Linux's /proc says about a process: its peak
// resident memory, its CPU time (whole or by thread) and its parent, and the
// machine's CPU time. The bench, the chaos run
// and the tests that bound memory measure processes the same way through
// it. A process that is gone reads as zero.
package procfs

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// PeakRSS is the process's resident set high-water mark (VmHWM), in bytes.
func PeakRSS(pid int) int64 { return statusBytes(pid, "VmHWM:") }

// AnonRSS is the process's resident anonymous memory now (RssAnon), in
// bytes: its heap and stacks, without the executable's pages, which are
// file-backed and dropped by the kernel under memory pressure instead of
// counting towards an out-of-memory kill. Go's memory limit bounds this.
func AnonRSS(pid int) int64 { return statusBytes(pid, "RssAnon:") }

// statusBytes reads one kB field of /proc/<pid>/status, in bytes.
func statusBytes(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), field); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat times;
// Linux has used 100 on every architecture Go runs on.
const clockTicks = 100

// stat returns the fields of /proc/<pid>/stat after the command name (which
// may hold spaces): fields[0] is field 3, the state.
func stat(pid int) []string { return statOf(fmt.Sprintf("/proc/%d/stat", pid)) }

// statOf reads a stat file of a process or of one of its threads.
func statOf(path string) []string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	s := string(raw)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// CPU is the process's CPU time, user and system. withChildren adds what
// its reaped children used: Postgres backends that exit during a window are
// counted by the postmaster that reaped them.
func CPU(pid int, withChildren bool) time.Duration {
	fields := stat(pid)
	if len(fields) < 15 {
		return 0
	}
	last := 13 // utime is field 14, stime 15, cutime 16, cstime 17
	if withChildren {
		last = 15
	}
	var ticks int64
	for _, f := range fields[11 : last+1] {
		n, _ := strconv.ParseInt(f, 10, 64)
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks
}

// Parent is the process's parent pid.
func Parent(pid int) int {
	fields := stat(pid)
	if len(fields) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}

// Children lists the live children of pid.
func Children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err == nil && Parent(child) == pid {
			out = append(out, child)
		}
	}
	return out
}

// ThreadCPU is the CPU time of each of the process's live threads, summed
// by thread name (/proc/<pid>/task/<tid>/comm, at most 15 bytes): a JVM
// names its JIT compilers, collectors and the broker's own threads, so what
// a process spent can be told apart by what for.
func ThreadCPU(pid int) map[string]time.Duration {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	out := make(map[string]time.Duration, len(tasks))
	for _, t := range tasks {
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/comm", pid, t.Name()))
		if err != nil {
			continue
		}
		tid, _ := strconv.Atoi(t.Name())
		fields := statOf(fmt.Sprintf("/proc/%d/task/%d/stat", pid, tid))
		if len(fields) < 13 {
			continue
		}
		utime, _ := strconv.ParseInt(fields[11], 10, 64)
		stime, _ := strconv.ParseInt(fields[12], 10, 64)
		out[strings.TrimSpace(string(comm))] += time.Duration(utime+stime) * time.Second / clockTicks
	}
	return out
}

// Machine is the machine's CPU time so far, busy (every state but idle and
// iowait) and in all, over every CPU, from /proc/stat: busy over all between
// two readings is how loaded the machine was, whoever ran.
func Machine() (busy, all time.Duration) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line)
	if len(fields) < 8 || fields[0] != "cpu" {
		return 0, 0
	}
	var ticks [10]int64
	for i := range min(len(fields)-1, len(ticks)) {
		ticks[i], _ = strconv.ParseInt(fields[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal guest guest_nice; the
	// guest times are within user and nice already.
	var total int64
	for _, t := range ticks[:8] {
		total += t
	}
	idle := ticks[3] + ticks[4]
	return time.Duration(total-idle) * time.Second / clockTicks, time.Duration(total) * time.Second / clockTicks
}
