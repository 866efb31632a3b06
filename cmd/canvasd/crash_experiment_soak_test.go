//go:build soak

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Sizes of the experiment killed mid-run: the cases run crashSlots at
// once on a back end answering after crashCallDelay, so that the kill,
// after crashKillAfter results, finds it well short of its end.
const (
	crashCases       = 60
	crashRepetitions = 2
	crashSlots       = 4
	crashCallDelay   = 100 * time.Millisecond
	crashKillAfter   = 40
	// crashExperimentWait bounds the wait for the restarted server to
	// finish: the killed server's job lease (30 s) lapses first.
	crashExperimentWait = 3 * time.Minute
)

// crashVendor is an OpenAI-compatible back end that answers each call
// with the system message it was sent ("Version 2 greets case-07."), after
// crashCallDelay, and counts the calls per path prefix (one per server
// process) and per message.
type crashVendor struct {
	mu    sync.Mutex
	calls map[string]map[string]int // process -> message -> calls
}

var crashMessage = regexp.MustCompile(`Version \d greets case-\d+\.`)

func (v *crashVendor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	process, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	msg := crashMessage.FindString(string(body))
	v.mu.Lock()
	if v.calls[process] == nil {
		v.calls[process] = map[string]int{}
	}
	v.calls[process][msg]++
	v.mu.Unlock()
	select {
	case <-time.After(crashCallDelay):
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"x","object":"chat.completion","created":1,"model":"fake",
		"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],
		"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}`, msg)
}

// callsOf returns a copy of the calls a process made, by message.
func (v *crashVendor) callsOf(process string) map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string]int{}
	for k, n := range v.calls[process] {
		out[k] = n
	}
	return out
}

// TestCrash_ExperimentSurvivesKill runs canvasd eval against the canvasd
// binary running an experiment of crashCases × 2 versions × crashRepetitions
// on a slow back end, kills the server with SIGKILL in the middle and
// restarts it on the same data and address. The experiment resumes once
// the killed server's job lease lapses, and canvasd eval, which waited
// through the restart, reports it whole. Every (test case, version,
// repetition) has exactly one result; the results written before the
// kill are untouched (same result, same run); and the restarted server
// called the model exactly for the results that were missing, so no
// finished case ran twice.
func TestCrash_ExperimentSurvivesKill(t *testing.T) {
	bin := buildCanvasd(t)
	vendor := &crashVendor{calls: map[string]map[string]int{}}
	backend := httptest.NewServer(vendor)
	t.Cleanup(backend.Close)

	dir := t.TempDir()
	admin := uuid.NewString()
	env := func(process string) []string {
		return []string{"CANVAS_BOOTSTRAP_API_KEY=" + admin, "CANVAS_RATE_PER_KEY=0",
			"CANVAS_OPENAI_BASE_URL=" + backend.URL + "/" + process + "/v1"}
	}
	args := []string{"--data", dir, "--worker-concurrency", fmt.Sprint(crashSlots)}
	first := startChild(t, "first", bin, args, env("first"))

	ctx := t.Context()
	c, err := client.New(first.URL, client.Options{Token: admin})
	require.NoError(t, err)
	p, err := c.CreateProject(ctx, "crash")
	require.NoError(t, err)
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &p.ID})
	require.NoError(t, err)
	var versions [2]*wire.Version
	for i := range versions {
		versions[i], err = c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
			Configuration: &wire.Configuration{Model: "fake", Type: "chat"},
			Variables:     []wire.Variable{{Name: "name", Type: wire.VariableText}},
			Message:       &wire.MessageInput{Role: wire.RoleSystem, Content: fmt.Sprintf("Version %d greets {{name}}.", i+1)}})
		require.NoError(t, err)
	}
	message := map[string]string{} // "versionID testCaseID" -> the message the back end sees
	for i := range crashCases {
		name := fmt.Sprintf("case-%02d", i)
		expected := "greets " + name
		tc, err := c.CreateTestCase(ctx, wire.CreateTestCaseParams{PromptID: cv.ID, Title: name,
			Variables: map[string]any{"name": name}, ExpectedOutput: &expected})
		require.NoError(t, err)
		for j, v := range versions {
			message[v.ID+" "+tc.ID] = fmt.Sprintf("Version %d greets %s.", j+1, name)
		}
	}

	// canvasd eval, as a CI job would run it, for the whole test.
	junit := filepath.Join(t.TempDir(), "junit.xml")
	stdout, stderr := newOutput(), newOutput()
	evalCtx, cancelEval := context.WithTimeout(ctx, crashExperimentWait)
	defer cancelEval()
	evalDone := make(chan error, 1)
	go func() {
		evalDone <- run(evalCtx, []string{"eval", "--url", first.URL, "--canvas", cv.ID,
			"--candidate", versions[1].ID, "--baseline", versions[0].ID, "--evaluator", "contains",
			"--repetitions", fmt.Sprint(crashRepetitions), "--min-pass-rate", "100%", "--junit", junit, "--poll", "100ms"},
			getenv(map[string]string{"CANVAS_KEY": admin}), stdout, stderr)
	}()
	var id string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`experiment ([0-9a-f-]{36}) started`).FindStringSubmatch(stderr.String())
		if m != nil {
			id = m[1]
		}
		return id != ""
	}, waitLimit, 10*time.Millisecond, "canvasd eval starts the experiment; stderr: %s", stderr.String())

	total := crashCases * len(versions) * crashRepetitions
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(5 * time.Millisecond) {
		x, err := c.GetExperiment(ctx, id)
		require.NoError(t, err)
		require.False(t, x.Terminal(), "the experiment ended before the kill")
		if x.Progress.Done >= crashKillAfter {
			break
		}
		require.True(t, time.Now().Before(deadline), "the experiment wrote %d results in %s", x.Progress.Done, waitLimit)
	}
	first.Kill()

	second := startChild(t, "second", bin, append(args, "--addr", first.Addr), env("second"))
	require.Equal(t, first.URL, second.URL, "the restarted server listens where canvas eval calls")
	// The killed server's lease holds the job for a while yet: nothing
	// has run again when the results written before the kill are read.
	before := crashResults(t, c, id)
	require.Empty(t, vendor.callsOf("second"), "the restarted server has not resumed the job yet")
	require.GreaterOrEqual(t, len(before), crashKillAfter)
	require.Less(t, len(before), total, "the kill came before the end")
	t.Logf("killed with %d of %d results written", len(before), total)

	var evalErr error
	select {
	case evalErr = <-evalDone:
	case <-time.After(crashExperimentWait):
		t.Fatalf("canvasd eval did not return; stderr: %s\nserver: %s", stderr.String(), second.Stderr())
	}
	require.NoError(t, evalErr, "stderr: %s\nserver: %s", stderr.String(), second.Stderr())

	x, err := c.GetExperiment(ctx, id)
	require.NoError(t, err)
	require.Equal(t, wire.ExperimentCompleted, x.Status)
	assert.Equal(t, wire.ExperimentProgress{Done: total, Total: total}, x.Progress)
	for _, v := range x.Versions {
		require.NotNil(t, v.Totals)
		assert.Equal(t, total/2, v.Totals.Cases)
		assert.Equal(t, total/2, v.Totals.Passed)
	}

	// Exactly one result per (test case, version, repetition), each of
	// its own run, with the output its version gives.
	after := crashResults(t, c, id)
	require.Len(t, after, total)
	runs := map[string]bool{}
	written := map[string]int{} // "versionID testCaseID" -> results
	for k, r := range after {
		require.NotNil(t, r.RunID, "%s has its run", k)
		assert.False(t, runs[*r.RunID], "run %s is one result's", *r.RunID)
		runs[*r.RunID] = true
		require.NotNil(t, r.Output, k)
		assert.Equal(t, message[r.VersionID+" "+r.TestCaseID], *r.Output, k)
		assert.True(t, *r.Passed, k)
		written[r.VersionID+" "+r.TestCaseID]++
	}
	for k, n := range written {
		assert.Equal(t, crashRepetitions, n, k)
	}

	// The results written before the kill are the same results, of the
	// same runs.
	for k, r := range before {
		assert.Equal(t, r.ID, after[k].ID, k)
		assert.Equal(t, *r.RunID, *after[k].RunID, k)
	}

	// The restarted server ran exactly what was missing.
	missing := map[string]int{}
	for k := range message {
		missing[message[k]] = crashRepetitions
	}
	for _, r := range before {
		missing[message[r.VersionID+" "+r.TestCaseID]]--
	}
	for msg := range missing {
		if missing[msg] == 0 {
			delete(missing, msg)
		}
	}
	assert.Equal(t, missing, vendor.callsOf("second"), "the restarted server called the model once per missing result")

	// canvasd eval reported the whole experiment.
	r := readJUnit(t, junit)
	assert.Equal(t, total/2, r.Tests)
	assert.Zero(t, r.Failures)
	assert.Contains(t, stdout.String(), "Against the baseline: 0 regressions, 0 improvements, "+fmt.Sprint(total/2)+" unchanged.")
	t.Logf("canvasd eval: %s", lastLines(stderr.String(), 4))
}

// crashResults reads every result of the experiment, by "testCaseID
// versionID repetition"; a second result of the same key fails the test.
func crashResults(t *testing.T, c *client.Client, id string) map[string]*wire.ExperimentResult {
	t.Helper()
	out := map[string]*wire.ExperimentResult{}
	for offset := 0; ; {
		page, err := c.ExperimentResults(t.Context(), id, client.ResultsFilter{Limit: 500, Offset: offset})
		require.NoError(t, err)
		for _, r := range page.Data {
			k := fmt.Sprintf("%s %s %d", r.TestCaseID, r.VersionID, r.Repetition)
			require.NotContains(t, out, k, "one result per test case, version and repetition")
			out[k] = r
		}
		offset += len(page.Data)
		if len(page.Data) == 0 || offset >= page.Meta.TotalCount {
			return out
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
