package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/PID/stat. Linux
// reports them in USER_HZ, which is 100 on every architecture Go runs on.
const clockTicks = 100

// cpuTime returns the CPU time (user and system, every thread) process pid
// has used, from /proc/PID/stat.
func cpuTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// the fields after the last ")" start with field 3 (state).
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(raw[i+1:]))
	// utime and stime are fields 14 and 15, that is 11 and 12 after state.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// memory returns the resident set size of process pid now (VmRSS) and at
// its peak (VmHWM), in bytes, from /proc/PID/status.
func memory(pid int) (rss, peak int64, err error) {
	v, err := statusBytes(pid, "VmRSS", "VmHWM")
	return v["VmRSS"], v["VmHWM"], err
}

// residentShares returns how much of process pid's resident set is
// anonymous memory (its heap, stacks and data: RssAnon) and how much is
// pages of mapped files (its binary's code and read-only data, shared with
// every process mapping them and dropped by the kernel under pressure:
// RssFile), in bytes, from /proc/PID/status.
func residentShares(pid int) (anon, file int64, err error) {
	v, err := statusBytes(pid, "RssAnon", "RssFile")
	return v["RssAnon"], v["RssFile"], err
}

// statusBytes reads the named kB fields of /proc/PID/status, in bytes.
func statusBytes(pid int, names ...string) (map[string]int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	v := make(map[string]int64, len(names))
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || !slices.Contains(names, name) {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(value), "kB")), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/status %s: %w", pid, name, err)
		}
		v[name] = kb << 10
	}
	return v, nil
}

// resetPeak resets the peak resident set size of process pid (VmHWM) to
// its current size, so that the next reading is the peak since now. It
// reports whether the kernel allowed it (writing 5 to clear_refs needs
// Linux 4.0 and the right to trace the process).
func resetPeak(pid int) bool {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
}

// procWatch measures one process during a run: the CPU time it used and
// its peak resident set size. The zero pid measures nothing.
type procWatch struct {
	pid      int
	cpu0     time.Duration
	resetHWM bool
	maxRSS   int64
	stop     chan struct{}
	done     chan struct{}
}

// watchProc starts measuring process pid; Stop ends it.
func watchProc(pid int) *procWatch {
	w := &procWatch{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	if pid == 0 {
		close(w.done)
		return w
	}
	w.resetHWM = resetPeak(pid)
	w.cpu0, _ = cpuTime(pid)
	// VmRSS sampled every 50 ms is the peak's fallback when the kernel
	// does not let VmHWM be reset.
	go func() {
		defer close(w.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, _, err := memory(pid); err == nil {
				w.maxRSS = max(w.maxRSS, rss)
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// Stop ends the measurement and returns the CPU time used since the start
// and the peak resident set size; both are zero for the zero pid.
func (w *procWatch) Stop() (cpu time.Duration, peak int64) {
	if w.pid == 0 {
		return 0, 0
	}
	close(w.stop)
	<-w.done
	cpu1, err := cpuTime(w.pid)
	if err == nil {
		cpu = cpu1 - w.cpu0
	}
	peak = w.maxRSS
	if _, hwm, err := memory(w.pid); err == nil && w.resetHWM {
		peak = max(peak, hwm)
	}
	return cpu, peak
}
