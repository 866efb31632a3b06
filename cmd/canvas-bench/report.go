package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report is everything one run of the load program measured.
type report struct {
	Date    time.Time `json:"date"`
	Command string    `json:"command"`
	Machine string    `json:"machine"`
	Go      string    `json:"go"`
	Canvasd string    `json:"canvasd,omitempty"`
	// LoadBefore and LoadAfter are the machine's load averages (1, 5 and
	// 15 minutes) before and after the run.
	LoadBefore string `json:"loadBefore"`
	LoadAfter  string `json:"loadAfter"`
	// IdleRSS is canvasd's resident set once started, before any request;
	// PeakRSS the largest of any scenario.
	IdleRSS int64 `json:"idleRss"`
	// IdleAnon and IdleFile split IdleRSS into anonymous memory and pages
	// of mapped files (residentShares).
	IdleAnon int64 `json:"idleAnon"`
	IdleFile int64 `json:"idleFile"`
	// KeptUpAt is the highest offered rate of async completions that was
	// accepted whole and delivered as it came (0.95); MaxDelivered the
	// highest rate of deliveries during any async load; MaxKeptUp the
	// highest accepted rate of a run whose accepted requests were
	// delivered as they came (0.95, end-to-end p99 under 1 s), refusals or
	// not: the capacity the push-back holds the server to.
	KeptUpAt     float64          `json:"keptUpAt"`
	MaxDelivered float64          `json:"maxDelivered"`
	MaxKeptUp    float64          `json:"maxKeptUp"`
	PeakRSS      int64            `json:"peakRss"`
	Closed       []closedScenario `json:"closed"`
	Async        []asyncScenario  `json:"async"`
	Goals        []goal           `json:"goals"`
}

// closedScenario is a closed-loop scenario: canvasd and its baselines.
type closedScenario struct {
	Key     string         `json:"key"`
	Name    string         `json:"name"`
	Clients int            `json:"clients"`
	Targets []targetResult `json:"targets"`
}

// targetResult adds up the rounds of one target.
type targetResult struct {
	Name string `json:"name"`
	runResult
	// Rounds are the throughputs of each round.
	Rounds []float64 `json:"rounds"`
}

func (t *targetResult) add(r runResult) {
	t.Rounds = append(t.Rounds, r.Throughput())
	t.Requests += r.Requests
	t.Errors += r.Errors
	if t.ErrorSample == "" {
		t.ErrorSample = r.ErrorSample
	}
	t.Seconds += r.Seconds
	t.CPU += r.CPU
	t.PeakRSS = max(t.PeakRSS, r.PeakRSS)
	t.samples = append(t.samples, r.samples...)
	t.latencies = summarise(t.samples)
}

// target returns the result of the target named name.
func (s closedScenario) target(name string) *targetResult {
	for i := range s.Targets {
		if s.Targets[i].Name == name {
			return &s.Targets[i]
		}
	}
	return nil
}

// ratio is canvasd's throughput over the target's named name.
func (s closedScenario) ratio(name string) float64 {
	ours, base := s.target("canvasd"), s.target(name)
	if ours == nil || base == nil || base.Throughput() == 0 {
		return 0
	}
	return ours.Throughput() / base.Throughput()
}

// asyncScenario is one open-loop run of async completions.
type asyncScenario struct {
	Key          string  `json:"key"`
	FailFraction float64 `json:"failFraction"`
	asyncResult
}

// goal is one of the goals, as measured.
type goal struct {
	Goal     string `json:"goal"`
	Ours     string `json:"ours"`
	Baseline string `json:"baseline"`
	Ratio    string `json:"ratio"`
	Target   string `json:"target"`
	Met      bool   `json:"met"`
}

func newReport(cfg config) *report {
	return &report{Date: time.Now().UTC(), Command: cfg.Command, Machine: machine(), Go: runtime.Version(),
		LoadBefore: loadAverage()}
}

// finish records the load average after the run and checks the goals.
func (r *report) finish() {
	r.LoadAfter = loadAverage()
	const mb = 1 << 20
	for _, s := range r.Closed {
		for _, t := range s.Targets {
			if t.Name == "canvasd" {
				r.PeakRSS = max(r.PeakRSS, t.PeakRSS)
			}
		}
		ours := s.target("canvasd")
		for _, base := range s.Targets {
			if base.Name == "canvasd" {
				continue
			}
			want, label := 0.0, ""
			switch {
			case s.Key == "version-8" || s.Key == "version-32":
				want, label = 0.75, "bare"
			case s.Key == "echo-8" && base.Name == "bare":
				want, label = 0.3, "bare"
			case s.Key == "echo-8" && base.Name == "ceiling":
				want, label = 3, "commit ceiling"
			case s.Key == "publish-8" && base.Name == "ceiling":
				want, label = 1.5, "commit ceiling"
			default:
				continue
			}
			ratio := s.ratio(base.Name)
			r.Goals = append(r.Goals, goal{
				Goal:     fmt.Sprintf("%s, %d clients, vs %s", s.Name, s.Clients, label),
				Ours:     fmt.Sprintf("%.0f/s", ours.Throughput()),
				Baseline: fmt.Sprintf("%.0f/s", base.Throughput()),
				Ratio:    fmt.Sprintf("%.2f×", ratio),
				Target:   fmt.Sprintf("≥ %g×", want),
				Met:      ratio >= want,
			})
		}
		if s.Key == "publish-8" && ours != nil && ours.Requests > 0 {
			cpu := ours.CPUPerRequest()
			r.Goals = append(r.Goals, goal{Goal: "CPU per publish", Ours: micros(cpu), Baseline: "-", Ratio: "-",
				Target: "≤ 150 µs", Met: cpu > 0 && cpu <= 150*time.Microsecond})
		}
	}
	for _, a := range r.Async {
		r.PeakRSS = max(r.PeakRSS, a.PeakRSS)
		name := fmt.Sprintf("async, %g/s offered", a.Rate)
		if a.Key == "flaky" {
			name += fmt.Sprintf(", receiver failing %.0f %% of attempts", a.FailFraction*100)
			r.Goals = append(r.Goals, goal{Goal: name + ": every event delivered, none twice",
				Ours:     fmt.Sprintf("%d of %d delivered, %d twice", a.Delivered, a.Accepted, a.Duplicates+a.DuplicateIDs),
				Baseline: "-", Ratio: "-", Target: "all, 0 twice",
				Met: a.Accepted > 0 && a.Backlog == 0 && a.Duplicates == 0 && a.DuplicateIDs == 0})
			continue
		}
		kept := 0.0
		if a.Accepted > 0 {
			kept = float64(a.DeliveredInLoad) / float64(a.Accepted)
		}
		pushedBack := a.Refused > 0 && a.RetryAfter == a.Refused
		ours := fmt.Sprintf("%.0f/s accepted, %.0f/s delivered", float64(a.Accepted)/a.Seconds,
			float64(a.DeliveredInLoad)/a.Seconds)
		if a.Refused > 0 {
			ours += fmt.Sprintf(", %d refused (429)", a.Refused)
		}
		// At every offered rate, what the server accepts is delivered as it
		// comes; above its capacity it refuses the rest, each refusal with
		// Retry-After, rather than accept what it cannot deliver.
		target := "≥ 0.95"
		if a.Refused > 0 {
			target += ", every 429 with Retry-After"
		}
		r.Goals = append(r.Goals, goal{Goal: name + ": deliveries keep up with what is accepted", Ours: ours,
			Baseline: "-", Ratio: fmt.Sprintf("%.2f delivered/accepted", kept), Target: target,
			Met: a.Accepted > 0 && kept >= 0.95 && (a.Refused == 0 || pushedBack)})
		r.Goals = append(r.Goals, goal{Goal: name + ": end-to-end p99", Ours: millis(a.EndToEnd.P99),
			Baseline: "-", Ratio: "-", Target: "< 1 s (quiet machine)", Met: a.Delivered > 0 && a.EndToEnd.P99 < time.Second})
		if a.Errors == 0 && kept >= 0.95 && a.EndToEnd.P99 < time.Second {
			r.MaxKeptUp = max(r.MaxKeptUp, float64(a.Accepted)/a.Seconds)
		}
		if a.Refused == 0 && a.Errors == 0 && a.Skipped == 0 && kept >= 0.95 {
			r.KeptUpAt = max(r.KeptUpAt, a.Rate)
		}
		r.MaxDelivered = max(r.MaxDelivered, float64(a.DeliveredInLoad)/a.Seconds)
	}
	if r.IdleRSS > 0 {
		r.Goals = append(r.Goals, goal{Goal: "idle RSS", Ours: megabytes(r.IdleRSS), Baseline: "-", Ratio: "-",
			Target: "≤ 40 MB", Met: r.IdleRSS <= 40*mb})
		r.Goals = append(r.Goals, goal{Goal: "peak RSS, every scenario", Ours: megabytes(r.PeakRSS), Baseline: "-",
			Ratio: "-", Target: "≤ 100 MB", Met: r.PeakRSS <= 100*mb})
	}
}

// write prints the report, as Markdown or aligned text, and writes it as
// JSON when cfg asks for it.
func (r *report) write(cfg config, w io.Writer) error {
	if cfg.JSON != "" {
		raw, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.JSON, raw, 0o644); err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(w)
	t := &tables{w: bw, markdown: cfg.Markdown}
	t.para(fmt.Sprintf("Run %s with %s: %s. Load average (1, 5, 15 min) before: %s; after: %s.",
		r.Date.Format("2006-01-02 15:04 UTC"), r.Go, r.Machine, r.LoadBefore, r.LoadAfter))
	t.code(r.Command)
	if len(r.Closed) > 0 {
		t.para("Closed loop: each client sends its next request when the previous one is answered, over " +
			"kept-alive connections. req/s adds up the rounds; rounds are interleaved with the baselines'. " +
			"CPU/req and peak RSS are the measured process's (canvasd, or the baseline process).")
		rows := [][]string{{"scenario", "clients", "server", "req/s", "req/s per round", "p50", "p99", "p99.9",
			"CPU/req", "peak RSS", "errors", "canvasd ÷ this"}}
		for _, s := range r.Closed {
			for _, tr := range s.Targets {
				ratio := "-"
				if tr.Name != "canvasd" {
					ratio = fmt.Sprintf("%.2f×", s.ratio(tr.Name))
				}
				var rounds []string
				for _, v := range tr.Rounds {
					rounds = append(rounds, fmt.Sprintf("%.0f", v))
				}
				errs := fmt.Sprint(tr.Errors)
				if tr.ErrorSample != "" {
					errs += " (" + tr.ErrorSample + ")"
				}
				rows = append(rows, []string{s.Name, fmt.Sprint(s.Clients), serverName(tr.Name),
					fmt.Sprintf("%.0f", tr.Throughput()), strings.Join(rounds, " · "), millis(tr.P50),
					millis(tr.P99), millis(tr.P999), micros(tr.CPUPerRequest()), megabytes(tr.PeakRSS), errs, ratio})
			}
		}
		t.table(rows)
	}
	if len(r.Async) > 0 {
		t.para("Async completions with webhook_url, open loop: requests are sent at the offered rate whatever " +
			"the answers take. Delivered: runs whose notification the receiver answered 2xx; during the load, " +
			"and after a drain of at most the time shown. End to end: from sending the request to the " +
			"receiver's 2xx. CPU is canvasd's per accepted run, load and drain together.")
		rows := [][]string{{"offered/s", "accepted/s", "429 (Retry-After)", "errors, skipped",
			"delivered/s in load", "backlog at end of load", "delivered after drain", "left", "twice",
			"e2e p50", "e2e p99", "attempts (failed)", "CPU/run", "peak RSS"}}
		for _, a := range r.Async {
			offered := fmt.Sprintf("%g", a.Rate)
			if a.Key == "flaky" {
				offered += fmt.Sprintf(" (%.0f %% of attempts fail)", a.FailFraction*100)
			}
			errs := fmt.Sprintf("%d, %d", a.Errors, a.Skipped)
			if a.ErrorSample != "" {
				errs += " (" + a.ErrorSample + ")"
			}
			cpu := time.Duration(0)
			if a.Accepted > 0 {
				cpu = a.CPU / time.Duration(a.Accepted)
			}
			rows = append(rows, []string{offered, fmt.Sprintf("%.0f", float64(a.Accepted)/a.Seconds),
				fmt.Sprintf("%d (%d)", a.Refused, a.RetryAfter), errs,
				fmt.Sprintf("%.0f", float64(a.DeliveredInLoad)/a.Seconds), fmt.Sprint(a.BacklogAtEnd),
				fmt.Sprintf("%d of %d (%.1f s)", a.Delivered, a.Accepted, a.DrainSeconds), fmt.Sprint(a.Backlog),
				fmt.Sprint(a.Duplicates + a.DuplicateIDs), millis(a.EndToEnd.P50), millis(a.EndToEnd.P99),
				fmt.Sprintf("%d (%d)", a.Attempts, a.FailedAttempts), micros(cpu), megabytes(a.PeakRSS)})
		}
		t.table(rows)
	}
	if len(r.Async) > 0 {
		kept := "at none of the offered rates"
		if r.KeptUpAt > 0 {
			kept = fmt.Sprintf("up to %g/s offered (the highest such rate run)", r.KeptUpAt)
		}
		t.para(fmt.Sprintf("Async capacity: every request accepted and delivered as it came %s; at most %.0f "+
			"deliveries/s during a load; at most %.0f accepted/s in a run whose accepted requests were delivered as "+
			"they came (≥ 0.95 during the load, end-to-end p99 < 1 s).", kept, r.MaxDelivered, r.MaxKeptUp))
	}
	if r.IdleRSS > 0 {
		t.para(fmt.Sprintf("canvasd's resident set: %s idle (started, before any request: %s anonymous, %s pages "+
			"of its binary and other mapped files); at most %s in any scenario.",
			megabytes(r.IdleRSS), megabytes(r.IdleAnon), megabytes(r.IdleFile), megabytes(r.PeakRSS)))
	}
	if len(r.Goals) > 0 {
		rows := [][]string{{"goal", "ours", "baseline", "ratio", "goal", "met"}}
		for _, g := range r.Goals {
			met := "no"
			if g.Met {
				met = "yes"
			}
			rows = append(rows, []string{g.Goal, g.Ours, g.Baseline, g.Ratio, g.Target, met})
		}
		t.table(rows)
	}
	return bw.Flush()
}

// serverName names a target in the tables.
func serverName(name string) string {
	switch name {
	case "bare":
		return "bare net/http"
	case "ceiling":
		return "commit ceiling"
	}
	return name
}

// tables prints paragraphs, code and tables as Markdown or plain text.
type tables struct {
	w        io.Writer
	markdown bool
}

func (t *tables) para(s string) { fmt.Fprintf(t.w, "%s\n\n", s) }

func (t *tables) code(s string) {
	if t.markdown {
		fmt.Fprintf(t.w, "    %s\n\n", s)
		return
	}
	fmt.Fprintf(t.w, "  $ %s\n\n", s)
}

func (t *tables) table(rows [][]string) {
	if t.markdown {
		for i, row := range rows {
			cells := slices.Clone(row)
			for j := range cells {
				cells[j] = strings.ReplaceAll(cells[j], "|", `\|`)
			}
			fmt.Fprintf(t.w, "| %s |\n", strings.Join(cells, " | "))
			if i == 0 {
				fmt.Fprintf(t.w, "|%s\n", strings.Repeat("---|", len(row)))
			}
		}
		fmt.Fprintln(t.w)
		return
	}
	tw := tabwriter.NewWriter(t.w, 0, 0, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	fmt.Fprintln(t.w)
}

func millis(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func micros(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
}

func megabytes(n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// machine describes the CPUs and memory.
func machine() string {
	model := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(raw)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(raw)) {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				var kb int64
				fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
				mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%d × %s%s, %s/%s", runtime.NumCPU(), model, mem, runtime.GOOS, runtime.GOARCH)
}
