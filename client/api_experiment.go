package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Experiments.

// StartExperiment queues an experiment: the canvas's test cases run
// against versions (or environments) and scored by evaluators. The answer
// is the queued experiment; WaitExperiment waits for its end.
func (c *Client) StartExperiment(ctx context.Context, req wire.ExperimentRequest, opts ...CallOption) (*wire.Experiment, error) {
	var out wire.Experiment
	return &out, c.write(ctx, http.MethodPost, "/experiments", req, &out, opts)
}

// GetExperiment reads an experiment with its progress and each version's
// totals.
func (c *Client) GetExperiment(ctx context.Context, id string) (*wire.Experiment, error) {
	var out wire.Experiment
	return &out, c.get(ctx, "/experiments/"+esc(id), nil, &out)
}

// CancelExperiment cancels an experiment that has not ended; one that has
// is CONFLICT.
func (c *Client) CancelExperiment(ctx context.Context, id string, opts ...CallOption) (*wire.Experiment, error) {
	var out wire.Experiment
	return &out, c.write(ctx, http.MethodPost, "/experiments/"+esc(id)+"/cancel", nil, &out, opts)
}

// WaitExperiment reads the experiment every interval (one second when
// zero) until it has ended or ctx ends, calling progress, when set, with
// each reading (a CLI draws its progress bar there). It returns the last
// reading: completed, failed or cancelled.
func (c *Client) WaitExperiment(ctx context.Context, id string, interval time.Duration, progress func(*wire.Experiment)) (*wire.Experiment, error) {
	if interval <= 0 {
		interval = time.Second
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		x, err := c.GetExperiment(ctx, id)
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(x)
		}
		if x.Terminal() {
			return x, nil
		}
		select {
		case <-ctx.Done():
			return x, ctx.Err()
		case <-ticker.C:
		}
	}
}

// ResultsFilter selects one page of an experiment's results; zero fields
// select everything, from the first page of the server's default size.
type ResultsFilter struct {
	VersionID  string
	TestCaseID string
	Limit      int
	Offset     int
}

// ExperimentResults reads one page of an experiment's results, in the
// order they were written.
func (c *Client) ExperimentResults(ctx context.Context, id string, f ResultsFilter) (*wire.Page[*wire.ExperimentResult], error) {
	q := url.Values{}
	setIf(q, "versionId", f.VersionID)
	setIf(q, "testCaseId", f.TestCaseID)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	if f.Offset > 0 {
		q.Set("offset", strconv.Itoa(f.Offset))
	}
	var out wire.Page[*wire.ExperimentResult]
	return &out, c.get(ctx, "/experiments/"+esc(id)+"/results", q, &out)
}

// CompareExperiment pairs the results of two of the experiment's versions,
// each a version id or the environment it was resolved from (for example
// "production"), and counts regressions and improvements.
func (c *Client) CompareExperiment(ctx context.Context, id, baseline, candidate string) (*wire.Comparison, error) {
	q := url.Values{"baseline": {baseline}, "candidate": {candidate}}
	var out wire.Comparison
	return &out, c.get(ctx, "/experiments/"+esc(id)+"/compare", q, &out)
}

// AnnotateResult records a person's review of a result of an experiment.
func (c *Client) AnnotateResult(ctx context.Context, experimentID, resultID string, req wire.AnnotationRequest, opts ...CallOption) (*wire.ExperimentResult, error) {
	var out wire.ExperimentResult
	return &out, c.write(ctx, http.MethodPost, "/experiments/"+esc(experimentID)+"/results/"+esc(resultID)+"/annotation",
		req, &out, opts)
}
