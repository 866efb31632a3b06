package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// reportRows bounds the rows of each table of the markdown summary; the
// JUnit report holds every result.
const reportRows = 100

// evalReport is what canvasd eval read of a completed experiment, and the
// gates it checks.
type evalReport struct {
	Experiment *wire.Experiment
	Canvas     *wire.Canvas
	Candidate  *versionRef
	// Baseline is nil without --baseline.
	Baseline *versionRef
	// MinPassRate is nil without --min-pass-rate; MaxRegressions is -1
	// for no bound.
	MinPassRate    *float64
	MaxRegressions int
	// Titles and Expected are the canvas's test cases' titles and expected
	// outputs, by id.
	Titles, Expected map[string]string
	// Results are the candidate's results.
	Results []*wire.ExperimentResult
	// Comparison is nil when there is no baseline to compare with.
	Comparison *wire.Comparison
}

// gate is one check of the candidate and its outcome.
type gate struct {
	ok   bool
	text string
}

// candidateTotals returns the candidate's totals, nil for none.
func (r *evalReport) candidateTotals() *wire.ExperimentTotals {
	if v := r.Experiment.Version(versionOf(r.Experiment, r.Candidate)); v != nil {
		return v.Totals
	}
	return nil
}

// regressions returns the pairs that passed on the baseline and failed on
// the candidate.
func (r *evalReport) regressions() []wire.ComparisonPair {
	if r.Comparison == nil {
		return nil
	}
	var out []wire.ComparisonPair
	for _, p := range r.Comparison.Cases {
		if p.Change == wire.ChangeRegression {
			out = append(out, p)
		}
	}
	return out
}

// regressed returns the set of (test case, repetition) that regressed.
func (r *evalReport) regressed() map[[2]string]bool {
	set := map[[2]string]bool{}
	for _, p := range r.regressions() {
		set[[2]string{p.TestCaseID, strconv.Itoa(p.Repetition)}] = true
	}
	return set
}

// gates checks the candidate against --min-pass-rate and
// --max-regressions.
func (r *evalReport) gates() []gate {
	var gates []gate
	if min := r.MinPassRate; min != nil {
		t := r.candidateTotals()
		switch {
		case t == nil || t.PassRate == nil:
			gates = append(gates, gate{false, fmt.Sprintf("no result of the candidate was graded, so its pass rate "+
				"cannot reach %s (--min-pass-rate)", percent(*min))})
		case *t.PassRate+1e-9 < *min:
			gates = append(gates, gate{false, fmt.Sprintf("the pass rate %s is under %s (--min-pass-rate)",
				percent(*t.PassRate), percent(*min))})
		default:
			gates = append(gates, gate{true, fmt.Sprintf("the pass rate %s is at least %s (--min-pass-rate)",
				percent(*t.PassRate), percent(*min))})
		}
	}
	if r.Baseline != nil && r.MaxRegressions >= 0 {
		n := len(r.regressions())
		if n > r.MaxRegressions {
			gates = append(gates, gate{false, fmt.Sprintf("%s against the baseline, more than %d (--max-regressions)",
				plural(n, "regression"), r.MaxRegressions)})
		} else {
			gates = append(gates, gate{true, fmt.Sprintf("%s against the baseline, at most %d (--max-regressions)",
				plural(n, "regression"), r.MaxRegressions)})
		}
	}
	return gates
}

// failedGates returns the texts of the gates the candidate missed.
func (r *evalReport) failedGates() []string {
	var out []string
	for _, g := range r.gates() {
		if !g.ok {
			out = append(out, g.text)
		}
	}
	return out
}

// sortedResults returns the candidate's results in the order of the
// experiment's test cases, then repetitions.
func (r *evalReport) sortedResults() []*wire.ExperimentResult {
	order := map[string]int{}
	for i, id := range r.Experiment.TestCaseIDs {
		order[id] = i
	}
	out := slices.Clone(r.Results)
	slices.SortStableFunc(out, func(a, b *wire.ExperimentResult) int {
		if c := order[a.TestCaseID] - order[b.TestCaseID]; c != 0 {
			return c
		}
		return a.Repetition - b.Repetition
	})
	return out
}

// caseName names a result's test case and repetition for people.
func (r *evalReport) caseName(res *wire.ExperimentResult) string {
	name := r.Titles[res.TestCaseID]
	if strings.TrimSpace(name) == "" {
		name = res.TestCaseID
	}
	if r.Experiment.Request.Repetitions > 1 {
		name += " #" + strconv.Itoa(res.Repetition)
	}
	return name
}

// why says why a result did not pass: each failing or erring
// evaluator's reason, the run's error, or the annotation that failed it.
func why(res *wire.ExperimentResult) string {
	if res.Error != nil {
		return res.Error.Code + ": " + res.Error.Message
	}
	var parts []string
	if a := res.Annotation; a != nil && !a.Passed {
		parts = append(parts, "annotated failed by "+a.By+oneLine(": ", a.Comment))
	}
	for _, s := range res.Scores {
		switch {
		case s.Error != nil:
			parts = append(parts, s.Evaluator+": error "+s.Error.Code+": "+s.Error.Message)
		case s.Passed != nil && !*s.Passed:
			parts = append(parts, s.Evaluator+": failed"+oneLine(": ", s.Reason))
		}
	}
	if len(parts) == 0 {
		return "no evaluator gave a verdict"
	}
	return strings.Join(parts, "; ")
}

// markdown writes the summary: the verdict, the totals per version, the
// gates, the regressions and the candidate's other failures.
func (r *evalReport) markdown(w io.Writer) {
	x := r.Experiment
	verdict := "passed"
	if len(r.failedGates()) > 0 {
		verdict = "failed"
	}
	fmt.Fprintf(w, "## canvasd eval: %s\n\n", verdict)
	title := r.Canvas.Title
	if title == "" {
		title = r.Canvas.ID
	}
	fmt.Fprintf(w, "Canvas **%s** (`%s`), experiment `%s`: %s × %s × %s.\n\n", mdCell(title), r.Canvas.ID, x.ID,
		plural(len(x.TestCaseIDs), "test case"), plural(len(x.Versions), "version"),
		plural(max(x.Request.Repetitions, 1), "repetition"))

	scoreNames := map[string]bool{}
	for _, v := range x.Versions {
		if v.Totals != nil {
			for name := range v.Totals.Scores {
				scoreNames[name] = true
			}
		}
	}
	names := slices.Sorted(maps.Keys(scoreNames))
	fmt.Fprint(w, "| version | role | results | passed | failed | errored | pass rate |")
	for _, n := range names {
		fmt.Fprintf(w, " %s |", mdCell(n))
	}
	fmt.Fprint(w, " tokens | cost | latency p50 / p95 |\n|---|---|--:|--:|--:|--:|--:|")
	fmt.Fprint(w, strings.Repeat("--:|", len(names)))
	fmt.Fprint(w, "--:|--:|--:|\n")
	rows := []struct {
		ref  *versionRef
		role string
	}{{r.Baseline, "baseline"}, {r.Candidate, "candidate"}}
	for _, row := range rows {
		if row.ref == nil {
			continue
		}
		v := x.Version(versionOf(x, row.ref))
		if v == nil || v.Totals == nil {
			continue
		}
		t := v.Totals
		rate := "–"
		if t.PassRate != nil {
			rate = percent(*t.PassRate)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d | %d | %s |", mdCell(row.ref.label(x)), row.role, t.Cases, t.Passed,
			t.Failed, t.Errored, rate)
		for _, n := range names {
			if s, ok := t.Scores[n]; ok {
				fmt.Fprintf(w, " %.2f |", s)
			} else {
				fmt.Fprint(w, " – |")
			}
		}
		fmt.Fprintf(w, " %d | %s | %d ms / %d ms |\n", t.Tokens, cost(t.Cost), t.LatencyP50Ms, t.LatencyP95Ms)
	}
	fmt.Fprintln(w)

	if c := r.Comparison; c != nil {
		fmt.Fprintf(w, "Against the baseline: %s, %s, %d unchanged.\n\n", plural(c.Regressions, "regression"),
			plural(c.Improvements, "improvement"), c.Unchanged)
	} else if r.Baseline != nil {
		fmt.Fprint(w, "The baseline is the candidate's version: nothing to compare.\n\n")
	}
	for _, g := range r.gates() {
		mark := "✅"
		if !g.ok {
			mark = "❌"
		}
		fmt.Fprintf(w, "- %s %s\n", mark, g.text)
	}
	if len(r.gates()) > 0 {
		fmt.Fprintln(w)
	}

	if regs := r.regressions(); len(regs) > 0 {
		fmt.Fprintf(w, "### Regressions (%d)\n\n| test case | baseline's output | candidate's output | why it failed |\n|---|---|---|---|\n", len(regs))
		for i, p := range regs {
			if i == reportRows {
				fmt.Fprintf(w, "\nand %d more (see the JUnit report or the console).\n", len(regs)-reportRows)
				break
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", mdCell(r.caseName(p.Candidate)), mdCode(outputOf(p.Baseline)),
				mdCode(outputOf(p.Candidate)), mdCell(why(p.Candidate)))
		}
		fmt.Fprintln(w)
	}

	regressed := r.regressed()
	var others []*wire.ExperimentResult
	for _, res := range r.sortedResults() {
		if (res.Passed == nil || !*res.Passed) && !regressed[[2]string{res.TestCaseID, strconv.Itoa(res.Repetition)}] {
			others = append(others, res)
		}
	}
	if len(others) > 0 {
		fmt.Fprintf(w, "### Other failures of the candidate (%d)\n\n| test case | output | expected | why |\n|---|---|---|---|\n", len(others))
		for i, res := range others {
			if i == reportRows {
				fmt.Fprintf(w, "\nand %d more (see the JUnit report or the console).\n", len(others)-reportRows)
				break
			}
			expected := "–"
			if e, ok := r.Expected[res.TestCaseID]; ok {
				expected = mdCode(e)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", mdCell(r.caseName(res)), mdCode(outputOf(res)), expected, mdCell(why(res)))
		}
		fmt.Fprintln(w)
	}
}

// JUnit XML, as CI systems read it: one suite of the candidate's results,
// a test case per test case and repetition.
type (
	junitSuites struct {
		XMLName  xml.Name     `xml:"testsuites"`
		Name     string       `xml:"name,attr"`
		Tests    int          `xml:"tests,attr"`
		Failures int          `xml:"failures,attr"`
		Errors   int          `xml:"errors,attr"`
		Time     string       `xml:"time,attr"`
		Suites   []junitSuite `xml:"testsuite"`
	}
	junitSuite struct {
		Name       string          `xml:"name,attr"`
		Tests      int             `xml:"tests,attr"`
		Failures   int             `xml:"failures,attr"`
		Errors     int             `xml:"errors,attr"`
		Skipped    int             `xml:"skipped,attr"`
		Time       string          `xml:"time,attr"`
		Timestamp  string          `xml:"timestamp,attr,omitempty"`
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	}
	junitProperty struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
	}
	junitCase struct {
		Name      string        `xml:"name,attr"`
		Classname string        `xml:"classname,attr"`
		Time      string        `xml:"time,attr"`
		Failure   *junitProblem `xml:"failure,omitempty"`
		Error     *junitProblem `xml:"error,omitempty"`
		SystemOut *junitText    `xml:"system-out,omitempty"`
	}
	junitText struct {
		Text string `xml:",cdata"`
	}
	junitProblem struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",cdata"`
	}
)

// junit returns the JUnit XML report of the candidate's results: a failed
// result is a failure carrying its evaluators' reasons (of type
// "regression" when it passed on the baseline), a result without a
// verdict (its run or every evaluator erred) an error.
func (r *evalReport) junit() ([]byte, error) {
	x := r.Experiment
	classname := xmlText(r.Canvas.Title)
	if classname == "" {
		classname = r.Canvas.ID
	}
	suite := junitSuite{Name: classname + " @ " + r.Candidate.label(x),
		Properties: []junitProperty{{"experiment", x.ID}, {"canvas", r.Canvas.ID},
			{"candidate", versionOf(x, r.Candidate)}}}
	if x.StartedAt != nil {
		suite.Timestamp = x.StartedAt.UTC().Format("2006-01-02T15:04:05")
	}
	if r.Baseline != nil {
		suite.Properties = append(suite.Properties, junitProperty{"baseline", versionOf(x, r.Baseline)})
	}
	if t := r.candidateTotals(); t != nil && t.PassRate != nil {
		suite.Properties = append(suite.Properties, junitProperty{"passRate", strconv.FormatFloat(*t.PassRate, 'f', 4, 64)})
	}
	regressed := r.regressed()
	var total int64
	for _, res := range r.sortedResults() {
		total += res.LatencyMs
		c := junitCase{Name: xmlText(r.caseName(res)), Classname: classname, Time: seconds(res.LatencyMs)}
		detail := xmlText(resultDetail(res, r.Expected))
		switch {
		case res.Passed == nil:
			c.Error = &junitProblem{Message: xmlText(why(res)), Type: "error", Text: detail}
			suite.Errors++
		case !*res.Passed:
			p := &junitProblem{Message: xmlText(why(res)), Type: "failed", Text: detail}
			if regressed[[2]string{res.TestCaseID, strconv.Itoa(res.Repetition)}] {
				p.Type, p.Message = "regression", "regression (passed on the baseline): "+p.Message
			}
			c.Failure = p
			suite.Failures++
		default:
			c.SystemOut = &junitText{detail}
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Tests = len(suite.Cases)
	suite.Time = seconds(total)
	doc := junitSuites{Name: "canvasd eval", Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Time: suite.Time, Suites: []junitSuite{suite}}
	raw, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(raw, '\n')...), nil
}

// resultDetail is the text of a result in the JUnit report: its run, its
// scores, its output and the expected output.
func resultDetail(res *wire.ExperimentResult, expected map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "test case %s, repetition %d", res.TestCaseID, res.Repetition)
	if res.RunID != nil {
		fmt.Fprintf(&b, ", run %s", *res.RunID)
	}
	b.WriteString("\n")
	for _, s := range res.Scores {
		fmt.Fprintf(&b, "%s:", s.Evaluator)
		if s.Score != nil {
			fmt.Fprintf(&b, " score %.2f", *s.Score)
		}
		if s.Passed != nil {
			fmt.Fprintf(&b, " passed %t", *s.Passed)
		}
		if s.Error != nil {
			fmt.Fprintf(&b, " error %s: %s", s.Error.Code, s.Error.Message)
		}
		if s.Reason != "" {
			fmt.Fprintf(&b, " (%s)", s.Reason)
		}
		b.WriteString("\n")
	}
	if res.Output != nil {
		fmt.Fprintf(&b, "output:\n%s\n", *res.Output)
	}
	if e, ok := expected[res.TestCaseID]; ok {
		fmt.Fprintf(&b, "expected:\n%s\n", e)
	}
	return b.String()
}

// xmlText returns s with the characters XML cannot hold (most control
// characters, which a model's output may contain) replaced by U+FFFD:
// the report's texts are CDATA, which is not escaped.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r',
			r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
			return r
		}
		return '\uFFFD'
	}, s)
}

// outputOf returns a result's output, or why it has none.
func outputOf(res *wire.ExperimentResult) string {
	switch {
	case res == nil:
		return ""
	case res.Output != nil:
		return *res.Output
	case res.Error != nil:
		return "(" + res.Error.Code + ")"
	}
	return ""
}

// percent formats a rate from 0 to 1 as a percentage.
func percent(v float64) string {
	return strconv.FormatFloat(v*100, 'f', 1, 64) + "%"
}

// seconds formats milliseconds as JUnit's seconds.
func seconds(ms int64) string { return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64) }

// plural formats a count of things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

// cost formats a cost, "–" when none is known.
func cost(c *wire.Cost) string {
	if c == nil {
		return "–"
	}
	return strconv.FormatFloat(c.Total, 'f', -1, 64) + " " + c.Currency
}

// oneLine returns prefix and s on one line, or "" when s is empty.
func oneLine(prefix, s string) string {
	if s = strings.Join(strings.Fields(s), " "); s == "" {
		return ""
	}
	return prefix + s
}

// mdCellMax bounds the characters of a table cell of the summary.
const mdCellMax = 120

// mdCell makes s fit a markdown table cell: one line, pipes escaped, at
// most mdCellMax characters.
func mdCell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > mdCellMax {
		s = string(r[:mdCellMax-1]) + "…"
	}
	return strings.ReplaceAll(s, "|", `\|`)
}

// mdCode is mdCell as inline code, "–" for nothing.
func mdCode(s string) string {
	s = mdCell(s)
	if s == "" {
		return "–"
	}
	return "`" + strings.ReplaceAll(s, "`", "'") + "`"
}
