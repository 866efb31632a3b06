package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// evalServer is canvasd serving in-process for canvasd eval to call, with
// a canvas of four test cases graded by contains:
//
//	case    expected         v1 "Hello NAME."  v2 "Hello NAME!"  v3 "Hello NAME."
//	Ada     "Hello Ada"      pass              pass              pass
//	Grace   "Hello Grace"    pass              pass              pass
//	Linus   "Hello Linus."   pass              FAIL (planted)    pass
//	Bob     "Bye Bob"        fail              fail              fail
//
// v1 is published to production and v2 to staging: v2 regresses on one
// case against production, v3 on none. Stalled is a version whose model
// back end never answers.
type evalServer struct {
	URL, Key string
	Client   *client.Client
	Canvas   *wire.Canvas
	V        [4]*wire.Version // V[1], V[2], V[3]
	Stalled  *wire.Version
	Cases    map[string]*wire.TestCase
}

func startEvalServer(t *testing.T) *evalServer {
	t.Helper()
	// The back end of the stalled version answers when the call is
	// dropped or the test ends.
	release := make(chan struct{})
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
		http.Error(w, "stalled", http.StatusServiceUnavailable)
	}))
	t.Cleanup(stalled.Close)
	t.Cleanup(func() { close(release) })
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key, "CANVAS_RATE_PER_KEY": "0", "CANVAS_OPENAI_BASE_URL": stalled.URL + "/v1"})
	c, err := client.New(d.URL, client.Options{Token: key})
	require.NoError(t, err)
	ctx := t.Context()
	p, err := c.CreateProject(ctx, "ci")
	require.NoError(t, err)
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &p.ID})
	require.NoError(t, err)
	s := &evalServer{URL: d.URL, Key: key, Client: c, Canvas: cv, Cases: map[string]*wire.TestCase{}}
	for i, text := range []string{1: "Hello {{name}}.", 2: "Hello {{name}}!", 3: "Hello {{name}}."} {
		if i == 0 {
			continue
		}
		s.V[i], err = c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
			Configuration: &wire.Configuration{Model: "echo", Type: "chat"},
			Variables:     []wire.Variable{{Name: "name", Type: wire.VariableText}},
			Message:       &wire.MessageInput{Role: wire.RoleSystem, Content: text}})
		require.NoError(t, err)
	}
	s.Stalled, err = c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
		Configuration: &wire.Configuration{Model: "stalled", Type: "chat"},
		Message:       &wire.MessageInput{Role: wire.RoleSystem, Content: "Hello."}})
	require.NoError(t, err)
	_, err = c.Publish(ctx, client.PublishParams{CanvasID: cv.ID, EnvName: wire.Production, VersionID: s.V[1].ID})
	require.NoError(t, err)
	_, err = c.CreateEnvironment(ctx, cv.ID, "staging")
	require.NoError(t, err)
	_, err = c.Publish(ctx, client.PublishParams{CanvasID: cv.ID, EnvName: "staging", VersionID: s.V[2].ID})
	require.NoError(t, err)
	for _, tc := range [][2]string{{"Ada", "Hello Ada"}, {"Grace", "Hello Grace"}, {"Linus", "Hello Linus."}, {"Bob", "Bye Bob"}} {
		s.Cases[tc[0]], err = c.CreateTestCase(ctx, wire.CreateTestCaseParams{PromptID: cv.ID, Title: tc[0],
			Variables: map[string]any{"name": tc[0]}, ExpectedOutput: &tc[1]})
		require.NoError(t, err)
	}
	return s
}

// eval runs canvasd eval against the server with args, the key in
// CANVAS_KEY, and returns its outputs and error.
func (s *evalServer) eval(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	args = append([]string{"eval", "--url", s.URL, "--canvas", s.Canvas.ID, "--poll", "20ms"}, args...)
	err = run(t.Context(), args, getenv(map[string]string{"CANVAS_KEY": s.Key}), &out, &errOut)
	return out.String(), errOut.String(), err
}

// junitReport is a JUnit XML file as a CI system reads it.
type junitReport struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name       string `xml:"name,attr"`
		Tests      int    `xml:"tests,attr"`
		Failures   int    `xml:"failures,attr"`
		Errors     int    `xml:"errors,attr"`
		Properties []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// readJUnit parses the JUnit file at path and checks that its counts are
// those of its test cases.
func readJUnit(t *testing.T, path string) *junitReport {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var r junitReport
	require.NoError(t, xml.Unmarshal(raw, &r), "%s", raw)
	require.Len(t, r.Suites, 1)
	s := r.Suites[0]
	failures, errs := 0, 0
	for _, c := range s.Cases {
		if c.Failure != nil {
			failures++
		}
		if c.Error != nil {
			errs++
		}
	}
	assert.Equal(t, len(s.Cases), s.Tests)
	assert.Equal(t, []int{s.Tests, failures, errs}, []int{r.Tests, r.Failures, r.Errors}, "the totals are the suite's")
	assert.Equal(t, []int{failures, errs}, []int{s.Failures, s.Errors})
	return &r
}

// failures returns the names of a report's failed test cases by failure
// type.
func (r *junitReport) failures() map[string][]string {
	out := map[string][]string{}
	for _, c := range r.Suites[0].Cases {
		if c.Failure != nil {
			out[c.Failure.Type] = append(out[c.Failure.Type], c.Name)
		}
	}
	return out
}

func TestEval(t *testing.T) {
	t.Parallel()
	s := startEvalServer(t)

	t.Run("PlantedRegressionFails", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		junit, summary := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "summary.md")
		stdout, stderr, err := s.eval(t, "--candidate", s.V[2].ID, "--baseline", "production", "--evaluator", "contains",
			"--min-pass-rate", "0.5", "--junit", junit, "--summary", summary)
		require.ErrorIs(t, err, errEvalFailed, "stderr: %s", stderr)
		assert.EqualError(t, err, "the candidate failed the evaluation: 1 regression against the baseline, more than 0 (--max-regressions)")

		r := readJUnit(t, junit)
		assert.Equal(t, 4, r.Tests)
		assert.Equal(t, 2, r.Failures)
		assert.Equal(t, map[string][]string{"regression": {"Linus"}, "failed": {"Bob"}}, r.failures())
		for _, c := range r.Suites[0].Cases {
			if c.Name == "Linus" {
				assert.Contains(t, c.Failure.Message, "regression (passed on the baseline): contains: failed")
				assert.Contains(t, c.Failure.Text, "output:\nHello Linus!\n")
				assert.Contains(t, c.Failure.Text, "expected:\nHello Linus.\n")
			}
		}
		props := map[string]string{}
		for _, p := range r.Suites[0].Properties {
			props[p.Name] = p.Value
		}
		assert.Equal(t, s.V[2].ID, props["candidate"])
		assert.Equal(t, s.V[1].ID, props["baseline"])
		assert.Equal(t, "0.5000", props["passRate"])

		md, err := os.ReadFile(summary)
		require.NoError(t, err)
		assert.Equal(t, string(md), stdout, "the summary file is what stdout shows")
		assert.Contains(t, stdout, "## canvasd eval: failed\n")
		assert.Contains(t, stdout, "| production ("+s.V[1].ID+") | baseline | 4 | 3 | 1 | 0 | 75.0% | 0.75 |")
		assert.Contains(t, stdout, "| "+s.V[2].ID+" | candidate | 4 | 2 | 2 | 0 | 50.0% | 0.50 |")
		assert.Contains(t, stdout, "Against the baseline: 1 regression, 0 improvements, 3 unchanged.")
		assert.Contains(t, stdout, "- ✅ the pass rate 50.0% is at least 50.0% (--min-pass-rate)")
		assert.Contains(t, stdout, "- ❌ 1 regression against the baseline, more than 0 (--max-regressions)")
		assert.Contains(t, stdout, "### Regressions (1)\n")
		assert.Contains(t, stdout, "| Linus | `Hello Linus.` | `Hello Linus!` | contains: failed")
		assert.Contains(t, stdout, "### Other failures of the candidate (1)\n")

		// stderr is not a terminal: plain progress lines, the last one
		// the experiment's end.
		assert.Regexp(t, `canvasd eval: experiment [0-9a-f-]{36} started: 8 results to write\n`, stderr)
		assert.Regexp(t, `canvasd eval: experiment [0-9a-f-]{36} completed: 8/8 results\n`, stderr)
		assert.NotContains(t, stderr, "\r")
	})

	t.Run("RegressionsWithinBoundPass", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, err := s.eval(t, "--candidate", s.V[2].ID, "--baseline", s.V[1].ID, "--evaluator", "contains",
			"--max-regressions", "1")
		require.NoError(t, err, "stderr: %s", stderr)
		assert.Contains(t, stdout, "## canvasd eval: passed\n")
		assert.Contains(t, stdout, "- ✅ 1 regression against the baseline, at most 1 (--max-regressions)")
		assert.Contains(t, stderr, "canvasd eval: the candidate passed\n")
	})

	t.Run("NoRegressionPasses", func(t *testing.T) {
		t.Parallel()
		junit := filepath.Join(t.TempDir(), "junit.xml")
		stdout, stderr, err := s.eval(t, "--candidate", s.V[3].ID, "--baseline", "production", "--evaluator", "contains",
			"--min-pass-rate", "75%", "--junit", junit)
		require.NoError(t, err, "stderr: %s", stderr)
		assert.Contains(t, stdout, "Against the baseline: 0 regressions, 0 improvements, 4 unchanged.")
		assert.Contains(t, stdout, "- ✅ the pass rate 75.0% is at least 75.0% (--min-pass-rate)")
		assert.NotContains(t, stdout, "### Regressions")
		r := readJUnit(t, junit)
		assert.Equal(t, 4, r.Tests)
		assert.Equal(t, map[string][]string{"failed": {"Bob"}}, r.failures())
	})

	t.Run("PassRateUnderBoundFails", func(t *testing.T) {
		t.Parallel()
		stdout, _, err := s.eval(t, "--candidate", s.V[3].ID, "--evaluator", "contains", "--min-pass-rate", "80%")
		require.ErrorIs(t, err, errEvalFailed)
		assert.EqualError(t, err, "the candidate failed the evaluation: the pass rate 75.0% is under 80.0% (--min-pass-rate)")
		assert.NotContains(t, stdout, "baseline")
	})

	t.Run("Environments", func(t *testing.T) {
		t.Parallel()
		// Both named by environment: the server resolves them, and the
		// summary names them.
		stdout, stderr, err := s.eval(t, "--candidate", "staging", "--baseline", "production", "--evaluator", "contains")
		require.ErrorIs(t, err, errEvalFailed, "stderr: %s", stderr)
		assert.Contains(t, stdout, "| staging ("+s.V[2].ID+") | candidate | 4 | 2 | 2 |")
		assert.Contains(t, stdout, "| production ("+s.V[1].ID+") | baseline | 4 | 3 | 1 |")
	})

	t.Run("BaselineIsCandidate", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, err := s.eval(t, "--candidate", s.V[1].ID, "--baseline", "production", "--evaluator", "contains")
		require.NoError(t, err, "stderr: %s", stderr)
		assert.Contains(t, stderr, "the baseline production is the candidate's version "+s.V[1].ID+": nothing to compare")
		assert.Contains(t, stdout, "The baseline is the candidate's version: nothing to compare.")
		assert.Contains(t, stdout, "- ✅ 0 regressions against the baseline, at most 0 (--max-regressions)")
	})

	t.Run("TestCasesAndRepetitions", func(t *testing.T) {
		t.Parallel()
		junit := filepath.Join(t.TempDir(), "junit.xml")
		_, stderr, err := s.eval(t, "--candidate", s.V[2].ID, "--baseline", s.V[1].ID, "--evaluator", "hello:regex=^Hello",
			"--evaluator", "contains", "--test-cases", s.Cases["Linus"].ID+","+s.Cases["Ada"].ID, "--repetitions", "2",
			"--junit", junit)
		require.ErrorIs(t, err, errEvalFailed, "stderr: %s", stderr)
		assert.EqualError(t, err, "the candidate failed the evaluation: 2 regressions against the baseline, more than 0 (--max-regressions)")
		r := readJUnit(t, junit)
		assert.Equal(t, 4, r.Tests, "2 test cases × 2 repetitions of the candidate")
		assert.Equal(t, map[string][]string{"regression": {"Linus #1", "Linus #2"}}, r.failures())
	})

	t.Run("TagsByName", func(t *testing.T) {
		t.Parallel()
		tag := s.tag(t, "smoke", s.Cases["Linus"].ID, s.Cases["Grace"].ID)
		junit := filepath.Join(t.TempDir(), "junit.xml")
		_, stderr, err := s.eval(t, "--candidate", s.V[2].ID, "--evaluator", "contains", "--tags", "smoke", "--junit", junit)
		require.NoError(t, err, "stderr: %s", stderr)
		r := readJUnit(t, junit)
		assert.Equal(t, 2, r.Tests)
		assert.Equal(t, map[string][]string{"failed": {"Linus"}}, r.failures())

		_, _, err = s.eval(t, "--candidate", s.V[2].ID, "--evaluator", "contains", "--tags", tag, "--junit", junit)
		require.NoError(t, err, "a tag by its id")
		assert.Equal(t, 2, readJUnit(t, junit).Tests)

		_, _, err = s.eval(t, "--candidate", s.V[2].ID, "--evaluator", "contains", "--tags", "nightly")
		assert.EqualError(t, err, `--tags: the canvas has no tag "nightly"`)
	})

	t.Run("ServerErrors", func(t *testing.T) {
		t.Parallel()
		_, _, err := s.eval(t, "--candidate", "canary", "--evaluator", "contains")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "environment canary: ")
		assert.Equal(t, wire.CodeNotFound, client.ErrorCode(err))

		_, _, err = s.eval(t, "--candidate", s.V[2].ID, "--evaluator", uuid.NewString())
		assert.Equal(t, wire.CodeNotFound, client.ErrorCode(err), "an unknown saved evaluator: %v", err)
	})

	t.Run("TimeoutCancels", func(t *testing.T) {
		t.Parallel()
		// An experiment that has not ended within --timeout is cancelled.
		_, stderr, err := s.eval(t, "--candidate", s.Stalled.ID, "--evaluator", "contains", "--timeout", "1s")
		require.Error(t, err)
		assert.NotErrorIs(t, err, errEvalFailed)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "stderr: %s", stderr)
		assert.Regexp(t, `^experiment [0-9a-f-]{36} cancelled: `, err.Error())
		id := strings.Fields(err.Error())[1]
		x, err := s.Client.GetExperiment(t.Context(), id)
		require.NoError(t, err)
		assert.Equal(t, wire.ExperimentCancelled, x.Status)
	})
}

// tag creates a tag of the canvas on the test cases ids and returns its id.
func (s *evalServer) tag(t *testing.T, name string, ids ...string) string {
	t.Helper()
	post := func(path string, body any, out any) {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL+path, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.Key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Less(t, resp.StatusCode, 300, path)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(out))
	}
	var tag wire.Tag
	post("/test-case-tags", map[string]any{"name": name, "promptId": s.Canvas.ID}, &tag)
	var ignored any
	post("/test-case/bulk-add-tags", map[string]any{"testCaseIds": ids, "tagIds": []string{tag.ID}}, &ignored)
	return tag.ID
}

func TestEval_Usage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"Nothing", nil, nil, []string{"--url (or CANVAS_URL) is required", "--key (or CANVAS_KEY) is required",
			"--canvas is required", "--candidate is required", "name at least one --evaluator"}},
		{"Combined", []string{"--tags", "a", "--test-cases", "b"}, nil, []string{"--tags and --test-cases cannot be combined"}},
		{"SameVersion", []string{"--candidate", "production", "--baseline", "production"}, nil,
			[]string{"--candidate and --baseline name the same version"}},
		{"Repetitions", []string{"--repetitions", "0"}, nil, []string{"--repetitions must be at least 1"}},
		{"RegressionsWithoutBaseline", []string{"--max-regressions", "2"}, nil, []string{"--max-regressions needs a --baseline"}},
		{"BadRate", []string{"--min-pass-rate", "1.5"}, nil, []string{`invalid value "1.5" for flag -min-pass-rate`}},
		{"BadEvaluator", []string{"--evaluator", "fuzzy"}, nil, []string{`"fuzzy" is not an evaluator type`}},
		{"Positional", []string{"extra"}, nil, []string{`unexpected argument "extra"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := run(context.Background(), append([]string{"eval"}, tc.args...), getenv(tc.env), &out, &errOut)
			require.ErrorIs(t, err, errUsage)
			for _, w := range tc.want {
				assert.Contains(t, errOut.String(), w)
			}
			assert.Empty(t, out.String())
		})
	}
	t.Run("KeyFromEnvironment", func(t *testing.T) {
		t.Parallel()
		var errOut bytes.Buffer
		err := run(context.Background(), []string{"eval"}, getenv(map[string]string{"CANVAS_URL": "http://x", "CANVAS_KEY": "k"}),
			&bytes.Buffer{}, &errOut)
		require.ErrorIs(t, err, errUsage)
		assert.NotContains(t, errOut.String(), "--url")
		assert.NotContains(t, errOut.String(), "--key")
	})
	t.Run("HelpHidesKey", func(t *testing.T) {
		t.Parallel()
		var errOut bytes.Buffer
		err := run(context.Background(), []string{"eval", "--help"}, getenv(map[string]string{"CANVAS_KEY": "secret-key-value"}),
			&bytes.Buffer{}, &errOut)
		require.ErrorIs(t, err, flag.ErrHelp)
		assert.NotContains(t, errOut.String(), "secret-key-value")
	})
}

func TestParseEvaluator(t *testing.T) {
	t.Parallel()
	files := map[string]string{"judge.json": `{"name":"tone","type":"llm-judge","rubric":"Polite?","model":"echo"}`,
		"schema.json": `{"type":"object"}`}
	readFile := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	id := uuid.NewString()
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		in   string
		want wire.ExperimentEvaluator
	}{
		{"exact", wire.ExperimentEvaluator{Name: "exact", Type: "exact"}},
		{"contains", wire.ExperimentEvaluator{Name: "contains", Type: "contains"}},
		{"strict:json-equal", wire.ExperimentEvaluator{Name: "strict", Type: "json-equal"}},
		{"regex=^a:b$", wire.ExperimentEvaluator{Name: "regex", Type: "regex", Pattern: "^a:b$"}},
		{"greets:regex=^Hello", wire.ExperimentEvaluator{Name: "greets", Type: "regex", Pattern: "^Hello"}},
		{"similarity", wire.ExperimentEvaluator{Name: "similarity", Type: "similarity"}},
		{"similarity=0.8", wire.ExperimentEvaluator{Name: "similarity", Type: "similarity", Threshold: f(0.8)}},
		{"json-schema=@schema.json", wire.ExperimentEvaluator{Name: "json-schema", Type: "json-schema", Schema: json.RawMessage(`{"type":"object"}`)}},
		{`json-schema={"type":"string"}`, wire.ExperimentEvaluator{Name: "json-schema", Type: "json-schema", Schema: json.RawMessage(`{"type":"string"}`)}},
		{"@judge.json", wire.ExperimentEvaluator{Name: "tone", Type: "llm-judge", Rubric: "Polite?", Model: "echo"}},
		{`{"name":"hook","type":"webhook","url":"https://x.example/h","secret":"whsec_abc"}`,
			wire.ExperimentEvaluator{Name: "hook", Type: "webhook", URL: "https://x.example/h", Secret: "whsec_abc"}},
		{id, wire.ExperimentEvaluator{ID: id}},
	} {
		got, err := parseEvaluator(tc.in, readFile)
		if assert.NoError(t, err, tc.in) {
			assert.Equal(t, tc.want, got, tc.in)
		}
	}
	for in, want := range map[string]string{
		"exact=x":            "exact takes no argument",
		"regex":              "regex needs its pattern",
		"similarity=high":    "the threshold is a number",
		"json-schema":        "json-schema needs its schema",
		"json-schema={":      "is not valid JSON",
		"@missing.json":      "file does not exist",
		`{"name":"x","t":1}`: "is not an evaluator",
		"llm-judge":          "give a llm-judge evaluator as JSON",
		"fuzzy":              `"fuzzy" is not an evaluator type`,
	} {
		_, err := parseEvaluator(in, readFile)
		if assert.Error(t, err, in) {
			assert.Contains(t, err.Error(), want, in)
		}
	}
}

func TestRateFlag(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]float64{"0.9": 0.9, "90%": 0.9, "0": 0, "100%": 1, "1": 1, " 75 %": 0.75} {
		var r rateFlag
		if assert.NoError(t, r.Set(in), in) {
			assert.InDelta(t, want, *r.rate(), 1e-12, in)
		}
	}
	for _, in := range []string{"", "x", "1.01", "-0.1", "101%", "%"} {
		var r rateFlag
		assert.Error(t, r.Set(in), in)
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	x := &wire.Experiment{ID: "x1", Status: wire.ExperimentRunning, Progress: wire.ExperimentProgress{Done: 3, Total: 10}}
	t.Run("Terminal", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		p := &progress{w: &b, tty: true, tenth: -1}
		p.update(x)
		end := &wire.Experiment{ID: "x1", Status: wire.ExperimentCompleted, Progress: wire.ExperimentProgress{Done: 10, Total: 10}}
		p.update(end)
		p.done(end)
		assert.Equal(t, "\r\033[K[#########.....................] 3/10 running"+
			"\r\033[K[##############################] 10/10 completed\n", b.String())
	})
	t.Run("Plain", func(t *testing.T) {
		t.Parallel()
		var b bytes.Buffer
		p := newProgress(&b)
		require.False(t, p.tty)
		for done := 0; done < 10; done++ {
			p.update(&wire.Experiment{ID: "x1", Status: wire.ExperimentRunning, Progress: wire.ExperimentProgress{Done: done / 2 * 2, Total: 10}})
		}
		p.note("the server did not answer; waiting")
		end := &wire.Experiment{ID: "x1", Status: wire.ExperimentCompleted, Progress: wire.ExperimentProgress{Done: 10, Total: 10}}
		p.update(end)
		p.done(end)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		assert.Equal(t, []string{
			"canvasd eval: experiment x1 running: 0/10 results",
			"canvasd eval: experiment x1 running: 2/10 results",
			"canvasd eval: experiment x1 running: 4/10 results",
			"canvasd eval: experiment x1 running: 6/10 results",
			"canvasd eval: experiment x1 running: 8/10 results",
			"canvasd eval: the server did not answer; waiting",
			"canvasd eval: experiment x1 completed: 10/10 results",
		}, lines, "one line a tenth or a new status; done after the last reading adds nothing")
	})
}

func TestEvalReport_JUnit(t *testing.T) {
	t.Parallel()
	// Outputs are a model's text: control characters and CDATA's end
	// survive as well-formed XML, and a result without a verdict is an
	// error, not a failure.
	out := "a\x00b]]>c\n<tag>"
	f, tr := false, true
	x := &wire.Experiment{ID: "x", TestCaseIDs: []string{"t1", "t2", "t3"}, Status: wire.ExperimentCompleted,
		Request:  wire.ExperimentRequest{Repetitions: 1},
		Versions: []wire.ExperimentVersion{{VersionID: "v"}}}
	r := &evalReport{Experiment: x, Canvas: &wire.Canvas{ID: "c", Title: "C\x01"}, Candidate: &versionRef{Name: "v", VersionID: "v"},
		MaxRegressions: -1, Titles: map[string]string{"t1": "one", "t2": "two"}, Expected: map[string]string{"t1": "x"},
		Results: []*wire.ExperimentResult{
			{TestCaseID: "t3", Repetition: 1, Error: &wire.ExperimentError{Code: "PROVIDER", Message: "down"}},
			{TestCaseID: "t2", Repetition: 1, Output: &out, Passed: &tr},
			{TestCaseID: "t1", Repetition: 1, Output: &out, Passed: &f,
				Scores: []wire.ExperimentScore{{Evaluator: "exact", Passed: &f, Reason: "differs"}}},
		}}
	raw, err := r.junit()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "junit.xml")
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	rep := readJUnit(t, path)
	cases := rep.Suites[0].Cases
	require.Len(t, cases, 3)
	assert.Equal(t, []string{"one", "two", "t3"}, []string{cases[0].Name, cases[1].Name, cases[2].Name}, "in the experiment's order")
	require.NotNil(t, cases[0].Failure)
	assert.Equal(t, "failed", cases[0].Failure.Type)
	assert.Equal(t, "exact: failed: differs", cases[0].Failure.Message)
	assert.Contains(t, cases[0].Failure.Text, "output:\na\uFFFDb]]>c\n<tag>\nexpected:\nx\n")
	assert.Nil(t, cases[1].Failure)
	require.NotNil(t, cases[2].Error)
	assert.Equal(t, "PROVIDER: down", cases[2].Error.Message)
	assert.Equal(t, []int{3, 1, 1}, []int{rep.Tests, rep.Failures, rep.Errors})
}
