package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// errEvalFailed is what canvasd eval returns when the experiment ran and
// the candidate missed a gate (--min-pass-rate, --max-regressions): main
// exits 1, failing the CI job.
var errEvalFailed = errors.New("the candidate failed the evaluation")

// evalConfig is the command line of canvasd eval.
type evalConfig struct {
	URL, Key       string
	Canvas         string
	Candidate      string
	Baseline       string
	Tags           listFlag
	TestCases      listFlag
	Evaluators     evaluatorsFlag
	Repetitions    int
	MinPassRate    rateFlag
	MaxRegressions int
	JUnit          string
	Summary        string
	Poll           time.Duration
	Timeout        time.Duration
}

// evalFlags registers canvasd eval's flags on fs, --url with its
// environment variable as default; --key's is read by withEnv.
func (c *evalConfig) evalFlags(fs *flag.FlagSet, env func(string) string) {
	fs.StringVar(&c.URL, "url", env("CANVAS_URL"), "`URL` of the server (env CANVAS_URL)")
	// The key's default is applied after parsing (withEnv), so that the
	// help never prints it.
	fs.StringVar(&c.Key, "key", "", "API `key` or JWT, editor role or above (env CANVAS_KEY; prefer it, which no process list shows)")
	fs.StringVar(&c.Canvas, "canvas", "", "`id` of the canvas whose test cases run (required)")
	fs.StringVar(&c.Candidate, "candidate", "", "the `version` judged: a version id or an environment such as staging (required)")
	fs.StringVar(&c.Baseline, "baseline", "", "the `version` compared against: a version id or an environment such as production")
	fs.Var(&c.Tags, "tags", "run the test cases of these `tags` (names or ids, comma-separated or repeated); default all")
	fs.Var(&c.TestCases, "test-cases", "run these test cases (`ids`, comma-separated or repeated); default all")
	fs.Var(&c.Evaluators, "evaluator", "an evaluator `spec` (repeat for several): exact, contains, json-equal, similarity[=T], "+
		"regex=PATTERN, json-schema=SCHEMA|@FILE, each as [NAME:]TYPE[=ARG]; a saved evaluator's id; "+
		"or an evaluator as JSON, inline or @FILE (llm-judge, webhook)")
	fs.IntVar(&c.Repetitions, "repetitions", 1, "how many times each test case runs on each version")
	fs.Var(&c.MinPassRate, "min-pass-rate", "fail when the candidate's pass rate is under this `rate` (0.9 or 90%); default no bound")
	fs.IntVar(&c.MaxRegressions, "max-regressions", 0,
		"fail when more than this many cases pass on the baseline and fail on the candidate (-1: no bound)")
	fs.StringVar(&c.JUnit, "junit", "", "write a JUnit XML report of the candidate's results to this `file`")
	fs.StringVar(&c.Summary, "summary", "", "also write the markdown summary to this `file` (it always goes to stdout)")
	fs.DurationVar(&c.Poll, "poll", time.Second, "how often the experiment's progress is read")
	fs.DurationVar(&c.Timeout, "timeout", 30*time.Minute, "cancel the experiment and fail when it has not ended within this long")
}

// withEnv fills what the command line left empty from the environment.
func (c *evalConfig) withEnv(env func(string) string) {
	if c.Key == "" {
		c.Key = env("CANVAS_KEY")
	}
}

// check returns the problems of a parsed command line, one a line.
func (c *evalConfig) check() error {
	var problems []string
	if c.URL == "" {
		problems = append(problems, "--url (or CANVAS_URL) is required")
	}
	if c.Key == "" {
		problems = append(problems, "--key (or CANVAS_KEY) is required")
	}
	if c.Canvas == "" {
		problems = append(problems, "--canvas is required")
	}
	if c.Candidate == "" {
		problems = append(problems, "--candidate is required")
	}
	if c.Candidate != "" && c.Candidate == c.Baseline {
		problems = append(problems, "--candidate and --baseline name the same version")
	}
	if len(c.Tags) > 0 && len(c.TestCases) > 0 {
		problems = append(problems, "--tags and --test-cases cannot be combined")
	}
	if len(c.Evaluators) == 0 {
		problems = append(problems, "name at least one --evaluator")
	}
	if c.Repetitions < 1 {
		problems = append(problems, "--repetitions must be at least 1")
	}
	if c.MaxRegressions < -1 {
		problems = append(problems, "--max-regressions must be -1 (no bound) or more")
	}
	if c.Baseline == "" && c.MaxRegressions > 0 {
		problems = append(problems, "--max-regressions needs a --baseline")
	}
	if c.Poll <= 0 || c.Timeout <= 0 {
		problems = append(problems, "--poll and --timeout must be positive")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// evalCmd runs an experiment of a canvas's test cases on a candidate
// version (and a baseline) on a running server, waits for it with a
// progress bar on stderr, writes the markdown summary to stdout (and
// --summary) and the JUnit report (--junit), and fails with
// errEvalFailed when the candidate misses a gate.
func evalCmd(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	var cfg evalConfig
	fs := newFlagSet("canvasd eval", stderr)
	cfg.evalFlags(fs, env)
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	cfg.withEnv(env)
	if err := cfg.check(); err != nil {
		fmt.Fprintf(stderr, "canvasd eval: %s\n", strings.ReplaceAll(err.Error(), "\n", "\ncanvasd eval: "))
		return errUsage
	}
	c, err := client.New(cfg.URL, client.Options{Token: cfg.Key, UserAgent: "canvasd-eval"})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	e := &evaluation{cfg: cfg, c: c, progress: newProgress(stderr)}
	rep, err := e.run(ctx)
	if err != nil {
		return err
	}
	var md bytes.Buffer
	rep.markdown(&md)
	if _, err := stdout.Write(md.Bytes()); err != nil {
		return err
	}
	if cfg.Summary != "" {
		if err := os.WriteFile(cfg.Summary, md.Bytes(), 0o644); err != nil {
			return fmt.Errorf("--summary: %w", err)
		}
	}
	if cfg.JUnit != "" {
		raw, err := rep.junit()
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.JUnit, raw, 0o644); err != nil {
			return fmt.Errorf("--junit: %w", err)
		}
	}
	if failed := rep.failedGates(); len(failed) > 0 {
		return fmt.Errorf("%w: %s", errEvalFailed, strings.Join(failed, "; "))
	}
	fmt.Fprintln(stderr, "canvasd eval: the candidate passed")
	return nil
}

// evaluation is one run of canvasd eval.
type evaluation struct {
	cfg      evalConfig
	c        *client.Client
	progress *progress
}

// run starts the experiment, waits for its end and reads what the report
// needs. An interrupted or timed-out wait cancels the experiment.
func (e *evaluation) run(ctx context.Context) (*evalReport, error) {
	cv, err := e.c.GetCanvas(ctx, e.cfg.Canvas)
	if err != nil {
		return nil, fmt.Errorf("canvas %s: %w", e.cfg.Canvas, err)
	}
	req := wire.ExperimentRequest{PromptID: cv.ID, TestCaseIDs: e.cfg.TestCases, Repetitions: e.cfg.Repetitions,
		Evaluators: e.cfg.Evaluators}
	if req.TagIDs, err = e.tagIDs(ctx, cv.ID); err != nil {
		return nil, err
	}
	cand, base, err := e.versions(ctx, cv.ID, &req)
	if err != nil {
		return nil, err
	}
	x, err := e.c.StartExperiment(ctx, req, client.WithIdempotencyKey("canvasd-eval-"+uuid.NewString()))
	if err != nil {
		return nil, fmt.Errorf("starting the experiment: %w", err)
	}
	fmt.Fprintf(e.progress.w, "canvasd eval: experiment %s started: %d results to write\n", x.ID, x.Progress.Total)
	x, err = e.wait(ctx, x.ID)
	if err != nil {
		return nil, err
	}
	if x.Status != wire.ExperimentCompleted {
		why := ""
		if x.Error != nil {
			why = ": " + x.Error.Message
		}
		return nil, fmt.Errorf("experiment %s ended %s%s", x.ID, x.Status, why)
	}
	rep := &evalReport{Experiment: x, Canvas: cv, Candidate: cand, Baseline: base,
		MinPassRate: e.cfg.MinPassRate.rate(), MaxRegressions: e.cfg.MaxRegressions, Titles: map[string]string{}, Expected: map[string]string{}}
	cases, err := e.c.ListTestCases(ctx, cv.ID)
	if err != nil {
		return nil, err
	}
	for _, tc := range cases {
		rep.Titles[tc.ID] = tc.Title
		if tc.ExpectedOutput != nil {
			rep.Expected[tc.ID] = *tc.ExpectedOutput
		}
	}
	candID := versionOf(x, cand)
	if rep.Results, err = e.results(ctx, x.ID, candID); err != nil {
		return nil, err
	}
	if base != nil && versionOf(x, base) != candID {
		if rep.Comparison, err = e.c.CompareExperiment(ctx, x.ID, versionOf(x, base), candID); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// versionRef is a version as the command line named it: a version id, or
// an environment and, once resolved, the version it publishes.
type versionRef struct {
	Name      string // what the command line said
	VersionID string // empty for an environment the server resolves
	Env       string // the environment, when Name is one
}

// label names v for people: "production (3f1c2a3e)" or "3f1c2a3e-...".
func (v *versionRef) label(x *wire.Experiment) string {
	id := versionOf(x, v)
	if v.Env == "" {
		return id
	}
	return v.Env + " (" + id + ")"
}

// versionOf returns the id of the experiment's version v stands for.
func versionOf(x *wire.Experiment, v *versionRef) string {
	if v.VersionID != "" {
		return v.VersionID
	}
	if ver := x.Version(v.Env); ver != nil {
		return ver.VersionID
	}
	return v.Env
}

// versions sets the versions of req: when every version is named by
// environment, the environments, which the server resolves when the
// experiment starts; else version ids, an environment among them resolved
// now. A baseline that is the
// candidate's version is not run twice: the candidate is compared with
// nothing and cannot regress.
func (e *evaluation) versions(ctx context.Context, canvasID string, req *wire.ExperimentRequest) (cand, base *versionRef, err error) {
	refs := []*versionRef{{Name: e.cfg.Candidate}}
	if e.cfg.Baseline != "" {
		refs = append(refs, &versionRef{Name: e.cfg.Baseline})
	}
	for _, r := range refs {
		if uuid.Validate(r.Name) == nil {
			r.VersionID = r.Name
		} else {
			r.Env = r.Name
		}
	}
	// Each environment's version now: to name ids when they are mixed
	// with ids, and to see a baseline that publishes the candidate.
	current := map[string]string{}
	for _, r := range refs {
		if r.Env == "" {
			current[r.Name] = r.VersionID
			continue
		}
		v, err := e.c.ActiveVersion(ctx, canvasID, r.Env)
		if err != nil {
			return nil, nil, fmt.Errorf("environment %s: %w", r.Env, err)
		}
		current[r.Name] = v.ID
	}
	cand = refs[0]
	run := refs
	if len(refs) == 2 {
		base = refs[1]
		if current[cand.Name] == current[base.Name] {
			fmt.Fprintf(e.progress.w, "canvasd eval: the baseline %s is the candidate's version %s: nothing to compare\n",
				base.Name, current[cand.Name])
			base.VersionID = current[base.Name]
			run = refs[:1]
		}
	}
	if cand.Env != "" && (len(run) == 1 || run[1].Env != "") {
		for _, r := range run {
			req.Environments = append(req.Environments, r.Env)
		}
		return cand, base, nil
	}
	for _, r := range run {
		r.VersionID = current[r.Name]
		req.VersionIDs = append(req.VersionIDs, r.VersionID)
	}
	return cand, base, nil
}

// tagIDs returns the ids of the tags --tags names, by id or by name.
func (e *evaluation) tagIDs(ctx context.Context, canvasID string) ([]string, error) {
	if len(e.cfg.Tags) == 0 {
		return nil, nil
	}
	tags, err := e.c.ListTags(ctx, canvasID)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(e.cfg.Tags))
	for _, name := range e.cfg.Tags {
		found := ""
		for _, t := range tags {
			if t.ID == name || t.Name == name {
				found = t.ID
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("--tags: the canvas has no tag %q", name)
		}
		ids = append(ids, found)
	}
	return ids, nil
}

// wait waits for the experiment's end, drawing its progress. The server
// going away for a while (a restart) is waited out; the context ending
// (an interrupt, --timeout) cancels the experiment.
func (e *evaluation) wait(ctx context.Context, id string) (*wire.Experiment, error) {
	for {
		x, err := e.c.WaitExperiment(ctx, id, e.cfg.Poll, e.progress.update)
		switch {
		case err == nil:
			e.progress.done(x)
			return x, nil
		case ctx.Err() != nil:
			e.progress.done(x)
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if _, cerr := e.c.CancelExperiment(stop, id); cerr != nil {
				return nil, fmt.Errorf("experiment %s: %w (cancelling it: %v)", id, context.Cause(ctx), cerr)
			}
			return nil, fmt.Errorf("experiment %s cancelled: %w", id, context.Cause(ctx))
		}
		var ce *client.Error
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("experiment %s: %w", id, err)
		}
		e.progress.note(fmt.Sprintf("the server did not answer (%v); waiting", err))
		select {
		case <-ctx.Done():
		case <-time.After(e.cfg.Poll):
		}
	}
}

// results reads every result of one version of the experiment.
func (e *evaluation) results(ctx context.Context, id, versionID string) ([]*wire.ExperimentResult, error) {
	const limit = 500
	var out []*wire.ExperimentResult
	for {
		page, err := e.c.ExperimentResults(ctx, id, client.ResultsFilter{VersionID: versionID, Limit: limit, Offset: len(out)})
		if err != nil {
			return nil, err
		}
		out = append(out, page.Data...)
		if len(page.Data) == 0 || len(out) >= page.Meta.TotalCount {
			return out, nil
		}
	}
}

// listFlag is a flag of values, comma-separated or repeated.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// rateFlag is a pass rate: a fraction from 0 to 1, or a percentage.
type rateFlag struct{ v *float64 }

func (r *rateFlag) String() string {
	if r == nil || r.v == nil {
		return ""
	}
	return strconv.FormatFloat(*r.v, 'f', -1, 64)
}

func (r *rateFlag) Set(s string) error {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if pct {
		v /= 100
	}
	if err != nil || v < 0 || v > 1 {
		return fmt.Errorf("%q is not a rate from 0 to 1 or 0%% to 100%%", s)
	}
	r.v = &v
	return nil
}

// rate returns the rate, nil when none was given.
func (r rateFlag) rate() *float64 { return r.v }

// evaluatorsFlag collects --evaluator values.
type evaluatorsFlag []wire.ExperimentEvaluator

func (f *evaluatorsFlag) String() string {
	if f == nil {
		return ""
	}
	names := make([]string, len(*f))
	for i, e := range *f {
		names[i] = e.Name
		if e.ID != "" {
			names[i] = e.ID
		}
	}
	return strings.Join(names, ",")
}

func (f *evaluatorsFlag) Set(s string) error {
	e, err := parseEvaluator(s, os.ReadFile)
	if err != nil {
		return err
	}
	*f = append(*f, e)
	return nil
}

// evaluatorName is the NAME of an evaluator given as NAME:TYPE[=ARG].
var evaluatorName = regexp.MustCompile(`^([A-Za-z0-9_.-]+):([a-z-]+)(=|$)`)

// parseEvaluator reads an --evaluator: a saved evaluator's id; an
// evaluator as a JSON object, inline or in a file named after @; or
// [NAME:]TYPE[=ARG] for the rules: regex takes its pattern, similarity
// its threshold, json-schema its schema (inline or @FILE). The name is
// the type's unless given.
func parseEvaluator(s string, readFile func(string) ([]byte, error)) (wire.ExperimentEvaluator, error) {
	var e wire.ExperimentEvaluator
	switch {
	case uuid.Validate(s) == nil:
		return wire.ExperimentEvaluator{ID: s}, nil
	case strings.HasPrefix(s, "{"), strings.HasPrefix(s, "@"):
		raw, err := jsonArg(s, readFile)
		if err != nil {
			return e, err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return e, fmt.Errorf("%s is not an evaluator: %w", s, err)
		}
		return e, nil
	}
	spec := s
	if m := evaluatorName.FindStringSubmatch(s); m != nil {
		e.Name = m[1]
		spec = strings.TrimPrefix(s, m[1]+":")
	}
	typ, arg, hasArg := strings.Cut(spec, "=")
	e.Type = typ
	if e.Name == "" {
		e.Name = typ
	}
	switch typ {
	case "exact", "contains", "json-equal":
		if hasArg {
			return e, fmt.Errorf("%s takes no argument: it compares with each test case's expected output", typ)
		}
	case "regex":
		if arg == "" {
			return e, errors.New("regex needs its pattern: regex=PATTERN")
		}
		e.Pattern = arg
	case "similarity":
		if hasArg {
			t, err := strconv.ParseFloat(arg, 64)
			if err != nil {
				return e, fmt.Errorf("similarity=%s: the threshold is a number from 0 to 1", arg)
			}
			e.Threshold = &t
		}
	case "json-schema":
		if arg == "" {
			return e, errors.New("json-schema needs its schema: json-schema=SCHEMA or json-schema=@FILE")
		}
		raw, err := jsonArg(arg, readFile)
		if err != nil {
			return e, err
		}
		e.Schema = raw
	case "llm-judge", "webhook":
		return e, fmt.Errorf("give a %s evaluator as JSON (inline or @FILE), or save it on the canvas and give its id", typ)
	default:
		return e, fmt.Errorf("%q is not an evaluator type (exact, contains, regex, json-schema, json-equal, similarity, llm-judge, webhook)", typ)
	}
	return e, nil
}

// jsonArg returns the JSON of an argument given inline or as @FILE.
func jsonArg(s string, readFile func(string) ([]byte, error)) (json.RawMessage, error) {
	raw := []byte(s)
	if name, ok := strings.CutPrefix(s, "@"); ok {
		var err error
		if raw, err = readFile(name); err != nil {
			return nil, err
		}
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%s is not valid JSON", s)
	}
	return json.RawMessage(bytes.TrimSpace(raw)), nil
}
