// Package canvasbench tests the load program cmd/canvas-bench end to end:
// it builds canvasd and canvas-bench and runs every scenario in a tiny
// configuration against a real canvasd child, the baseline child and the
// program's webhook receiver.
package canvasbench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/internal/childproc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// benchReport is the part of canvas-bench's JSON report the test reads.
type benchReport struct {
	Closed []struct {
		Key     string
		Clients int
		Targets []struct {
			Name        string
			Requests    int64
			Errors      int64
			ErrorSample string
			CPU         int64
			PeakRSS     int64
		}
	}
	Async []struct {
		Key                           string
		Accepted, Refused, Errors     int64
		DeliveredInLoad, BacklogAtEnd int64
		Delivered, Backlog            int64
		Duplicates, DuplicateIDs      int64
		Attempts, FailedAttempts      int64
		ErrorSample                   string
	}
	Goals []struct {
		Goal string
	}
	IdleRSS int64
}

// TestCanvasBench runs the load program with very short durations. It
// asserts what it counted, never how fast: every scenario ran with answers
// and no errors, and the async accounting adds up (accepted = delivered +
// backlog, none delivered twice), also with a receiver failing some of the
// attempts, whose every event arrives after the real schedule's first
// retry.
func TestCanvasBench(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs canvasd and canvas-bench")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	build := func(pkg string) string {
		bin, err := childproc.Build(ctx, dir, pkg)
		require.NoError(t, err)
		return bin
	}
	canvasd := build(childproc.Canvasd)
	bench := build("github.com/promptcanvas/promptcanvas/cmd/canvas-bench")

	jsonPath := filepath.Join(dir, "report.json")
	cmd := exec.CommandContext(ctx, bench, "--canvasd", canvasd, "--dir", dir, "--markdown", "--json", jsonPath,
		"--duration", "300ms", "--warmup", "100ms", "--rounds", "1",
		"--async-rates", "20,40", "--async-duration", "1s", "--drain", "10s",
		"--flaky-rate", "20", "--flaky-duration", "1s", "--fail-fraction", "0.3")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "canvas-bench: %s", stderr.String())

	raw, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var rep benchReport
	require.NoError(t, json.Unmarshal(raw, &rep))

	wantClosed := map[string][]string{
		"version-8":  {"canvasd", "bare"},
		"version-32": {"canvasd", "bare"},
		"includes-8": {"canvasd", "canvasd-includes"},
		"echo-8":     {"canvasd", "bare", "ceiling"},
		"publish-8":  {"canvasd", "ceiling"},
	}
	require.Len(t, rep.Closed, len(wantClosed))
	for _, s := range rep.Closed {
		want, ok := wantClosed[s.Key]
		require.True(t, ok, "unexpected scenario %s", s.Key)
		var names []string
		for _, tr := range s.Targets {
			names = append(names, tr.Name)
			assert.Positive(t, tr.Requests, "%s %s answered", s.Key, tr.Name)
			assert.Zero(t, tr.Errors, "%s %s: %s", s.Key, tr.Name, tr.ErrorSample)
			assert.Positive(t, tr.PeakRSS, "%s %s: its process's memory was read", s.Key, tr.Name)
		}
		assert.Equal(t, want, names, s.Key)
	}
	assert.Positive(t, rep.IdleRSS)

	require.Len(t, rep.Async, 3)
	for i, key := range []string{"async-20", "async-40", "flaky"} {
		a := rep.Async[i]
		assert.Equal(t, key, a.Key)
		assert.Positive(t, a.Accepted, "%s: runs accepted", key)
		assert.Zero(t, a.Errors, "%s: %s", key, a.ErrorSample)
		assert.Equal(t, a.Accepted, a.DeliveredInLoad+a.BacklogAtEnd, "%s: accepted = delivered + backlog at the end of the load", key)
		assert.Equal(t, a.Accepted, a.Delivered+a.Backlog, "%s: accepted = delivered + backlog after the drain", key)
		assert.LessOrEqual(t, a.DeliveredInLoad, a.Delivered, key)
		assert.Zero(t, a.Duplicates, "%s: no run notified twice", key)
		assert.Zero(t, a.DuplicateIDs, "%s: no webhook-id answered 2xx twice", key)
		assert.GreaterOrEqual(t, a.Attempts, a.Delivered, key)
	}
	flaky := rep.Async[2]
	assert.Zero(t, flaky.Backlog, "every event reaches the flaky receiver")
	assert.Positive(t, flaky.FailedAttempts, "the flaky receiver failed attempts")
	assert.Equal(t, flaky.Delivered+flaky.FailedAttempts, flaky.Attempts,
		"each failed attempt was retried once, and each delivery answered 2xx once")

	md := stdout.String()
	for _, s := range []string{"GET /environment/version", "POST /v2/chat/completions (sync, echo)",
		"POST /environment/publish", "commit ceiling", "bare net/http", "| goal | ours | baseline | ratio | goal | met |",
		"30 % of attempts fail", "canvas-bench --canvasd"} {
		assert.True(t, strings.Contains(md, s), "the Markdown report holds %q:\n%s", s, md)
	}
	assert.NotEmpty(t, rep.Goals)
}
