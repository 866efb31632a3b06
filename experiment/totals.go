package experiment

import (
	"slices"
)

// totalsOf returns versions, each with the totals of its results.
func totalsOf(versions []Version, results []*Result) []Version {
	byVersion := map[string][]*Result{}
	for _, r := range results {
		byVersion[r.VersionID] = append(byVersion[r.VersionID], r)
	}
	out := make([]Version, len(versions))
	for i, v := range versions {
		v.Totals = total(byVersion[v.VersionID])
		out[i] = v
	}
	return out
}

// total sums one version's results (see Totals).
func total(results []*Result) *Totals {
	t := &Totals{Scores: map[string]float64{}}
	sums, counts := map[string]float64{}, map[string]int{}
	var latencies []int64
	for _, r := range results {
		t.Cases++
		switch {
		case r.Passed == nil:
			t.Errored++
		case *r.Passed:
			t.Passed++
		default:
			t.Failed++
		}
		if r.RunID != nil {
			latencies = append(latencies, r.LatencyMs)
		}
		t.Cost = t.Cost.Add(r.Cost)
		t.Tokens += r.Usage.InputTokens + r.Usage.OutputTokens
		for _, s := range r.Scores {
			if s.Score != nil {
				sums[s.Evaluator] += *s.Score
				counts[s.Evaluator]++
			}
			if s.Judge != nil {
				t.JudgeCost = t.JudgeCost.Add(s.Judge.Cost)
			}
		}
		if a := r.Annotation; a != nil && a.Score != nil {
			sums[HumanEvaluator] += *a.Score
			counts[HumanEvaluator]++
		}
	}
	for name, n := range counts {
		t.Scores[name] = sums[name] / float64(n)
	}
	if graded := t.Passed + t.Failed; graded > 0 {
		rate := float64(t.Passed) / float64(graded)
		t.PassRate = &rate
	}
	slices.Sort(latencies)
	t.LatencyP50Ms, t.LatencyP95Ms = percentile(latencies, 50), percentile(latencies, 95)
	return t
}

// percentile returns the nearest-rank p-th percentile of sorted, 0 when it
// is empty.
func percentile(sorted []int64, p int) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 × n)
	return sorted[max(rank, 1)-1]
}

// compare pairs the results of versions base and cand of e, in the order
// of e's test cases then repetitions.
func compare(e *Experiment, base, cand string, results []*Result) *Comparison {
	type pairKey struct {
		testCaseID string
		repetition int
	}
	pairs := map[pairKey]*Pair{}
	for _, r := range results {
		k := pairKey{r.TestCaseID, r.Repetition}
		p := pairs[k]
		if p == nil {
			p = &Pair{TestCaseID: r.TestCaseID, Repetition: r.Repetition}
			pairs[k] = p
		}
		if r.VersionID == base {
			p.Baseline = r
		}
		if r.VersionID == cand {
			p.Candidate = r
		}
	}
	c := &Comparison{Baseline: base, Candidate: cand, Cases: []Pair{}}
	for _, id := range e.TestCaseIDs {
		for rep := 1; rep <= max(e.Request.Repetitions, 1); rep++ {
			p := pairs[pairKey{id, rep}]
			if p == nil {
				continue
			}
			p.Change = change(p.Baseline, p.Candidate)
			switch p.Change {
			case ChangeRegression:
				c.Regressions++
			case ChangeImprovement:
				c.Improvements++
			case ChangeUnchanged:
				c.Unchanged++
			}
			c.Cases = append(c.Cases, *p)
		}
	}
	return c
}
