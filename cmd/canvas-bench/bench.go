package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/internal/childproc"
)

// publishers is how many clients publish at once in the publish scenario,
// and how many writers the commit ceiling has.
const publishers = 8

// flakyDrainExtra is added to the drain of the flaky run: the real retry
// schedule waits about 5 s (±10 %) before the first retry.
const flakyDrainExtra = 10 * time.Second

// target is one server a closed-loop scenario measures.
type target struct {
	name string
	pid  int
	want int
	req  request
}

// bench starts the processes, creates the fixture and runs the scenarios
// cfg names, logging its progress to log.
func bench(ctx context.Context, cfg config, log io.Writer) (*report, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "canvas-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	rep := newReport(cfg)

	url, key, pid := cfg.URL, cfg.Key, cfg.PID
	if url == "" {
		bin := cfg.Canvasd
		if bin == "" {
			fmt.Fprintln(log, "building canvasd")
			if bin, err = childproc.Build(ctx, filepath.Join(dir, "bin"), childproc.Canvasd); err != nil {
				return nil, err
			}
		}
		key = uuid.NewString()
		args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", filepath.Join(dir, "canvasd"),
			"--rate-per-key", "0", "--log-level", "warn"}, cfg.CanvasdArgs...)
		cd, err := childproc.Start(ctx, childproc.Options{Name: "canvasd", Path: bin, Args: args,
			Env: []string{"CANVAS_BOOTSTRAP_API_KEY=" + key, "CANVAS_ALLOW_PRIVATE_NETWORKS=1"}})
		if err != nil {
			return nil, err
		}
		defer cd.Stop()
		url, pid = cd.URL, cd.PID()
		rep.Canvasd = bin
	}
	if pid != 0 {
		// Idle: listening, its background work started, nothing asked yet.
		sleep(ctx, time.Second)
		if rep.IdleRSS, _, err = memory(pid); err != nil {
			return nil, err
		}
		if rep.IdleAnon, rep.IdleFile, err = residentShares(pid); err != nil {
			return nil, err
		}
	}

	a := &api{url: url, key: key, client: &http.Client{Timeout: 30 * time.Second}}
	fx, err := setup(ctx, a, publishers)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	version, err := capture(ctx, a, http.MethodGet, fx.versionPath, nil, http.StatusOK)
	if err != nil {
		return nil, err
	}
	echo, err := capture(ctx, a, http.MethodPost, "/v2/chat/completions", fx.completion, http.StatusOK)
	if err != nil {
		return nil, err
	}
	responses := filepath.Join(dir, "responses.json")
	raw, err := json.Marshal([]cannedResponse{version, echo})
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(responses, raw, 0o600); err != nil {
		return nil, err
	}
	ceilingDir := filepath.Join(dir, "ceiling")
	if err := os.Mkdir(ceilingDir, 0o700); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	base, err := childproc.Start(ctx, childproc.Options{Name: "baseline", Path: self,
		Args: []string{"baseline", "--responses", responses, "--commit-dir", ceilingDir}})
	if err != nil {
		return nil, err
	}
	defer base.Stop()

	get := func(base string) request {
		return func(ctx context.Context, _, _ int) (*http.Request, error) {
			return newRequest(ctx, http.MethodGet, base+fx.versionPath, key, nil)
		}
	}
	getIncludes := func(ctx context.Context, _, _ int) (*http.Request, error) {
		return newRequest(ctx, http.MethodGet, url+fx.includesPath, key, nil)
	}
	post := func(u string, body []byte) request {
		return func(ctx context.Context, _, _ int) (*http.Request, error) {
			return newRequest(ctx, http.MethodPost, u, key, body)
		}
	}
	var bodies [][2][]byte
	for _, p := range fx.publishers {
		var b [2][]byte
		for i, v := range p.versions {
			b[i], _ = json.Marshal(publishBody(p.canvasID, v))
		}
		bodies = append(bodies, b)
	}
	// Each publisher alternates between its two versions across all its
	// rounds, so that every publish replaces the active publication (201)
	// rather than finding it active (200).
	published := make([]atomic.Int64, len(bodies))
	publish := func(ctx context.Context, c, _ int) (*http.Request, error) {
		return newRequest(ctx, http.MethodPost, url+"/environment/publish", key, bodies[c][published[c].Add(1)%2])
	}
	bare := func(r request) target { return target{name: "bare", pid: base.PID(), want: http.StatusOK, req: r} }
	ceiling := target{name: "ceiling", pid: base.PID(), want: http.StatusNoContent, req: post(base.URL+"/commit", nil)}
	scenarios := []struct {
		group, key, name string
		clients          int
		targets          []target
	}{
		{"version", "version-8", "GET /environment/version", 8, []target{
			{"canvasd", pid, http.StatusOK, get(url)}, bare(get(base.URL))}},
		{"version", "version-32", "GET /environment/version", 32, []target{
			{"canvasd", pid, http.StatusOK, get(url)}, bare(get(base.URL))}},
		{"includes", "includes-8", "GET /environment/version: plain, and resolved with three nested includes", 8, []target{
			{"canvasd", pid, http.StatusOK, get(url)}, {"canvasd-includes", pid, http.StatusOK, getIncludes}}},
		{"echo", "echo-8", "POST /v2/chat/completions (sync, echo)", 8, []target{
			{"canvasd", pid, http.StatusOK, post(url+"/v2/chat/completions", fx.completion)},
			bare(post(base.URL+"/v2/chat/completions", fx.completion)), ceiling}},
		{"publish", "publish-8", "POST /environment/publish", publishers, []target{
			{"canvasd", pid, http.StatusCreated, publish}, ceiling}},
	}
	for _, s := range scenarios {
		if !cfg.Scenarios[s.group] {
			continue
		}
		cs := closedScenario{Key: s.key, Name: s.name, Clients: s.clients}
		for _, t := range s.targets {
			cs.Targets = append(cs.Targets, targetResult{Name: t.name})
		}
		for round := range cfg.Rounds {
			for i, t := range s.targets {
				fmt.Fprintf(log, "%s: %s, round %d of %d\n", s.key, t.name, round+1, cfg.Rounds)
				r := closedLoop(ctx, s.clients, cfg.Warmup, cfg.Duration, t.pid, t.want, t.req)
				cs.Targets[i].add(r)
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
		}
		rep.Closed = append(rep.Closed, cs)
	}

	if cfg.Scenarios["async"] || cfg.Scenarios["flaky"] {
		rcv, err := newReceiver(ctx, 0)
		if err != nil {
			return nil, err
		}
		defer rcv.Close()
		body, _ := json.Marshal(map[string]any{"canvas_id": fx.canvasID, "environment_name": "production",
			"variables": map[string]any{"name": "Ada"}, "webhook_url": rcv.URL})
		completions := url + "/v2/chat/completions"
		if cfg.Scenarios["async"] {
			for _, rate := range cfg.AsyncRates {
				fmt.Fprintf(log, "async: %g/s offered for %s\n", rate, cfg.AsyncDuration)
				r := openLoop(ctx, completions, key, body, rate, cfg.AsyncDuration, cfg.Drain, cfg.MaxInFlight, pid, rcv)
				rep.Async = append(rep.Async, asyncScenario{Key: fmt.Sprintf("async-%g", rate), asyncResult: r})
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
		}
		if cfg.Scenarios["flaky"] {
			rcv.setFailFraction(cfg.FailFraction)
			fmt.Fprintf(log, "flaky: %g/s offered for %s, %g of the attempts failing\n", cfg.FlakyRate,
				cfg.FlakyDuration, cfg.FailFraction)
			r := openLoop(ctx, completions, key, body, cfg.FlakyRate, cfg.FlakyDuration, cfg.Drain+flakyDrainExtra,
				cfg.MaxInFlight, pid, rcv)
			rep.Async = append(rep.Async, asyncScenario{Key: "flaky", FailFraction: cfg.FailFraction, asyncResult: r})
		}
	}
	rep.finish()
	return rep, ctx.Err()
}
