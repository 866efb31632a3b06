//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exampleCIDir is the CI example, from this package's directory.
var exampleCIDir = filepath.Join("..", "..", "examples", "ci")

// runExampleScript runs examples/ci/eval.sh with bash, with PATH starting
// at bin and vars added to an environment without canvasd's variables,
// and returns its outputs and exit code.
func runExampleScript(t *testing.T, bin string, vars map[string]string) (stdout, stderr string, code int) {
	t.Helper()
	tools := requireTools(t, "bash")
	script, err := filepath.Abs(filepath.Join(exampleCIDir, "eval.sh"))
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), tools["bash"], "--noprofile", "--norc", script)
	cmd.Dir = t.TempDir()
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CANVAS_") && !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "GITHUB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for k, v := range vars {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err, "stderr: %s", errOut.String())
	return out.String(), errOut.String(), 0
}

// TestExampleCI_Flags runs the example's script with a canvasd that only
// records its arguments, and parses them with canvasd eval's own flag set:
// every flag the example passes is one of the command's, and the command
// line it makes is valid.
func TestExampleCI_Flags(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	require.NoError(t, os.WriteFile(filepath.Join(bin, "canvasd"),
		[]byte("#!/bin/sh\nprintf '%s\\0' \"$@\" > \""+argv+"\"\n"), 0o700))
	reports := filepath.Join(t.TempDir(), "reports")
	vars := map[string]string{"CANVAS_URL": "http://127.0.0.1:1", "CANVAS_KEY": "key", "CANVAS_ID": "c1",
		"EVALUATORS": "contains 3f1c2a3e-0000-4000-8000-000000000000", "TAGS": "smoke,nightly", "REPORTS": reports}
	_, stderr, code := runExampleScript(t, bin, vars)
	require.Zero(t, code, "stderr: %s", stderr)
	raw, err := os.ReadFile(argv)
	require.NoError(t, err)
	args := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	require.Equal(t, "eval", args[0], "the script runs canvasd eval: %q", args)

	var cfg evalConfig
	var errOut bytes.Buffer
	fs := newFlagSet("canvasd eval", &errOut)
	cfg.evalFlags(fs, getenv(vars))
	require.NoError(t, noPositional(fs, args[1:], &errOut), "%q: %s", args, errOut.String())
	assert.Empty(t, cfg.Key, "the key is not on the command line")
	cfg.withEnv(getenv(vars))
	require.NoError(t, cfg.check())
	assert.Equal(t, "c1", cfg.Canvas)
	assert.Equal(t, "staging", cfg.Candidate)
	assert.Equal(t, "production", cfg.Baseline)
	assert.Equal(t, 0.9, *cfg.MinPassRate.rate())
	assert.Equal(t, 0, cfg.MaxRegressions)
	assert.Equal(t, listFlag{"smoke", "nightly"}, cfg.Tags)
	assert.Equal(t, "contains,3f1c2a3e-0000-4000-8000-000000000000", cfg.Evaluators.String())
	assert.Equal(t, filepath.Join(reports, "junit.xml"), cfg.JUnit)
	assert.Equal(t, filepath.Join(reports, "summary.md"), cfg.Summary)
	for _, a := range args {
		assert.NotEqual(t, "key", a, "the key is not on the command line")
	}
}

// exampleCanvasd returns a directory holding canvasd: this test binary
// under that name, which TestMain runs as canvasd.
func exampleCanvasd(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(self, filepath.Join(bin, "canvasd")))
	return bin
}

// TestExampleCI_Run runs the example's script as the workflow does, with
// the real canvasd eval, against a server: the planted regression fails
// the job (exit status 1) and a candidate without one passes; the reports
// are written and the summary is added to the step's summary.
func TestExampleCI_Run(t *testing.T) {
	t.Parallel()
	s := startEvalServer(t)
	bin := exampleCanvasd(t)
	for _, tc := range []struct {
		name, candidate string
		code            int
		failures        int
	}{
		{"PlantedRegression", "staging", 1, 2},
		{"NoRegression", s.V[3].ID, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			step := filepath.Join(dir, "step-summary.md")
			stdout, stderr, code := runExampleScript(t, bin, map[string]string{"CANVAS_URL": s.URL, "CANVAS_KEY": s.Key,
				"CANVAS_ID": s.Canvas.ID, "CANDIDATE": tc.candidate, "MIN_PASS_RATE": "50%",
				"REPORTS": filepath.Join(dir, "reports"), "GITHUB_STEP_SUMMARY": step})
			require.Equal(t, tc.code, code, "stdout: %s\nstderr: %s", stdout, stderr)
			if tc.code != 0 {
				assert.Contains(t, stderr, "canvasd: the candidate failed the evaluation: 1 regression against the baseline")
			}
			r := readJUnit(t, filepath.Join(dir, "reports", "junit.xml"))
			assert.Equal(t, 4, r.Tests)
			assert.Equal(t, tc.failures, r.Failures)
			summary, err := os.ReadFile(filepath.Join(dir, "reports", "summary.md"))
			require.NoError(t, err)
			assert.Equal(t, string(summary), stdout)
			shown, err := os.ReadFile(step)
			require.NoError(t, err)
			assert.Equal(t, string(summary), string(shown))
		})
	}
}

// TestExampleCI_Workflow checks that the example workflow runs the script
// and gives it the variables it requires.
func TestExampleCI_Workflow(t *testing.T) {
	t.Parallel()
	workflow, err := os.ReadFile(filepath.Join(exampleCIDir, "prompt-eval.yml"))
	require.NoError(t, err)
	script, err := os.ReadFile(filepath.Join(exampleCIDir, "eval.sh"))
	require.NoError(t, err)
	assert.Contains(t, string(workflow), "run: examples/ci/eval.sh\n")
	assert.Contains(t, string(workflow), "go build -o \"$RUNNER_TEMP/bin/canvasd\" ./cmd/canvasd\n")
	required := regexp.MustCompile(`\$\{([A-Z_]+):\?`).FindAllStringSubmatch(string(script), -1)
	require.Len(t, required, 3)
	for _, m := range required {
		assert.Regexp(t, `(?m)^\s+`+m[1]+`: \$\{\{ (vars|secrets)\.`+m[1]+` \}\}$`, string(workflow),
			"the workflow sets %s, which the script requires", m[1])
	}
	assert.Contains(t, string(workflow), "CANVAS_KEY: ${{ secrets.CANVAS_KEY }}", "the key is a secret")
}
