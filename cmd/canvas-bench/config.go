package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// config is the load program's flags.
type config struct {
	// Canvasd is the canvasd binary to run; empty builds ./cmd/canvasd.
	Canvasd string
	// CanvasdArgs are added to "canvasd serve".
	CanvasdArgs []string
	// URL targets a canvasd already running, with Key, an admin API key;
	// PID is its process, for CPU and memory (0: not measured).
	URL string
	Key string
	PID int
	// Dir is where the data directories go (the ceiling's too, so that it
	// measures the same disk).
	Dir string
	// Duration and Warmup are each closed-loop run's; Rounds how many
	// times each target runs, interleaved with the others.
	Duration, Warmup time.Duration
	Rounds           int
	// AsyncRates are the offered rates of async completions, each run for
	// AsyncDuration and then drained for at most Drain.
	AsyncRates    []float64
	AsyncDuration time.Duration
	Drain         time.Duration
	// FailFraction of the receiver's attempts fail in the flaky run,
	// offered at FlakyRate for FlakyDuration.
	FailFraction  float64
	FlakyRate     float64
	FlakyDuration time.Duration
	// MaxInFlight bounds the open loop's requests waiting for an answer.
	MaxInFlight int
	// Scenarios names the scenarios to run.
	Scenarios map[string]bool
	// Markdown prints the report as Markdown; JSON also writes it as JSON
	// to this file.
	Markdown bool
	JSON     string
	// Command is the command line, for the report.
	Command string
}

// allScenarios are the scenario groups, in the order they run.
var allScenarios = []string{"version", "includes", "echo", "publish", "async", "flaky"}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("canvas-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Canvasd, "canvasd", "", "canvasd `binary` to run; default: go build ./cmd/canvasd into a temporary directory")
	extra := fs.String("canvasd-args", "", "extra `arguments` of canvasd serve, space-separated (for example --pprof 127.0.0.1:6060)")
	fs.StringVar(&c.URL, "url", "", "`URL` of a running canvasd to measure instead of starting one (needs --key; "+
		"start it with --rate-per-key 0, and CANVAS_ALLOW_PRIVATE_NETWORKS=1 for the async scenarios)")
	fs.StringVar(&c.Key, "key", "", "admin API `key` of the canvasd at --url")
	fs.IntVar(&c.PID, "pid", 0, "process `id` of the canvasd at --url, for its CPU time and memory")
	fs.StringVar(&c.Dir, "dir", "", "`directory` for the data directories (canvasd's and the ceiling's); default: the system's temporary directory")
	fs.DurationVar(&c.Duration, "duration", 3*time.Second, "length of each closed-loop run")
	fs.DurationVar(&c.Warmup, "warmup", 500*time.Millisecond, "warm-up before each closed-loop run, not measured")
	fs.IntVar(&c.Rounds, "rounds", 2, "runs of each target per scenario, interleaved")
	rates := fs.String("async-rates", "100,200,400,800,1600", "offered `rates` of async completions per second, comma-separated")
	fs.DurationVar(&c.AsyncDuration, "async-duration", 10*time.Second, "length of each async run")
	fs.DurationVar(&c.Drain, "drain", 30*time.Second, "longest wait, after an async run, for its notifications")
	fs.Float64Var(&c.FailFraction, "fail-fraction", 0.3, "share of the attempts the receiver fails in the flaky run (below 0.5)")
	fs.Float64Var(&c.FlakyRate, "flaky-rate", 100, "offered `rate` of the flaky run")
	fs.DurationVar(&c.FlakyDuration, "flaky-duration", 5*time.Second, "length of the flaky run")
	fs.IntVar(&c.MaxInFlight, "max-in-flight", 512, "most open-loop requests waiting for an answer")
	scen := fs.String("scenarios", strings.Join(allScenarios, ","), "scenarios to run, comma-separated: "+strings.Join(allScenarios, ", "))
	fs.BoolVar(&c.Markdown, "markdown", false, "print the report as Markdown")
	fs.StringVar(&c.JSON, "json", "", "also write the report as JSON to this `file`")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	c.CanvasdArgs = strings.Fields(*extra)
	c.Command = "canvas-bench " + strings.Join(args, " ")
	switch {
	case c.URL != "" && c.Key == "":
		return c, fmt.Errorf("--url needs --key")
	case c.URL != "" && c.Canvasd != "":
		return c, fmt.Errorf("--url and --canvasd exclude each other")
	case c.Duration <= 0 || c.AsyncDuration <= 0 || c.FlakyDuration <= 0 || c.Warmup < 0 || c.Drain < 0:
		return c, fmt.Errorf("durations must be positive")
	case c.Rounds < 1:
		return c, fmt.Errorf("--rounds must be at least 1")
	case c.FailFraction < 0 || c.FailFraction >= 0.5:
		return c, fmt.Errorf("--fail-fraction must be in [0, 0.5)")
	case c.FlakyRate <= 0 || c.MaxInFlight < 1:
		return c, fmt.Errorf("--flaky-rate and --max-in-flight must be positive")
	}
	for r := range strings.SplitSeq(*rates, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || v <= 0 {
			return c, fmt.Errorf("--async-rates: %q is not a positive rate", r)
		}
		c.AsyncRates = append(c.AsyncRates, v)
	}
	c.Scenarios = map[string]bool{}
	for s := range strings.SplitSeq(*scen, ",") {
		s = strings.TrimSpace(s)
		if !contains(allScenarios, s) {
			return c, fmt.Errorf("--scenarios: unknown scenario %q", s)
		}
		c.Scenarios[s] = true
	}
	return c, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
