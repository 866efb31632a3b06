package testcase

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/queue"
)

// JobKindGenerate is the queue kind of the job that executes a generation;
// its RefID is the generation's id.
const JobKindGenerate = "testcase.generate"

// generationMaxAttempts bounds the executions of a generation whose job
// keeps failing for a reason of the service itself (a store error, a
// crash); a model failure is recorded at once instead of retried.
const generationMaxAttempts = 3

// Runner executes a version of a canvas: completion.Service, so that a
// generation takes the one execution path of completions and is recorded
// as a completion run.
type Runner interface {
	Run(ctx context.Context, params completion.RunParams) (*completion.Run, error)
	// Pin returns what the includes of a version resolve to now
	// (completion.Service.Pin); the generation runs with them.
	Pin(ctx context.Context, canvasID, versionID string) ([]canvas.Include, error)
}

// GenerationOptions wire a GenerationService. TestCases, Store and Runner
// are required.
type GenerationOptions struct {
	// TestCases reads test cases and tags, with their access checks.
	TestCases *Service
	// Store keeps generations and writes each with its job.
	Store GenerationStore
	// Runner executes the version of a generation.
	Runner Runner
	// Notify, when set, is called after jobs are enqueued, to wake the
	// queue worker.
	Notify func()
	// Cancel, when set, is called with a generation's id once it is
	// aborted: the in-process fast path that stops the model call of a
	// handler running in this process (queue.Worker.Cancel). Handlers in
	// other processes stop at their next heartbeat.
	Cancel func(refID string) int
	// NewID returns execution ids; nil means random UUIDs.
	NewID func() string
	// FinishedJob, when set, returns the job that reports a generation
	// HandleJob finishes (completed or failed), or nil for none. It is
	// called inside the transaction that records the outcome, so it does no
	// I/O (it only builds the job), and the job
	// is written there (an outbox), so the job commits with the outcome or
	// not at all; Notify is called once it has. The webhook notifier's
	// CanvasEventJob sends generation.completed this way.
	FinishedJob func(g *Generation) (*queue.Job, error)
}

// GenerationService runs test cases against versions as generations:
// background jobs that execute the version with the test case's inputs
// through the completion path, record the output, usage and latency, and
// grade the output (TestCase.Grade). Every method reads the Principal from
// its context: editors run and abort, viewers read. A generation inherits
// the access of its canvas.
type GenerationService struct {
	tc     *Service
	store  GenerationStore
	runner Runner
	notify func()
	cancel func(string) int
	// finishedJob is GenerationOptions.FinishedJob, or nil.
	finishedJob func(*Generation) (*queue.Job, error)
	newID       func() string
}

// NewGenerationService returns a GenerationService.
func NewGenerationService(opts GenerationOptions) *GenerationService {
	s := &GenerationService{tc: opts.TestCases, store: opts.Store, runner: opts.Runner,
		notify: opts.Notify, cancel: opts.Cancel, newID: opts.NewID,
		finishedJob: opts.FinishedJob}
	if s.notify == nil {
		s.notify = func() {}
	}
	if s.cancel == nil {
		s.cancel = func(string) int { return 0 }
	}
	if s.newID == nil {
		s.newID = uuid.NewString
	}
	return s
}

// RunResult answers a run request: the execution the generations belong
// to, the test cases run, and, for a single test case, its generation.
type RunResult struct {
	ExecutionID   string   `json:"executionId"`
	TestCaseIDs   []string `json:"testCaseIds"`
	GenerationID  string   `json:"generationId,omitempty"`
	GenerationIDs []string `json:"generationIds"`
}

// BatchParams select the test cases a batch runs. TestCaseIDs and TagIDs
// exclude each other; with neither, every live test case of the canvas
// runs.
type BatchParams struct {
	PromptID        string   `json:"promptId"`
	PromptVersionID string   `json:"promptVersionId"`
	TestCaseIDs     []string `json:"testCaseIds"`
	TagIDs          []string `json:"tagIds"`
}

// Run runs one test case against a version of its canvas. It requires the
// editor role. The generation is committed initializing, with its job,
// before Run returns, so that it can be polled or aborted at once. A
// malformed id is VALIDATION; an unknown test case, or a version that is
// not a live version of the test case's canvas, is NOT_FOUND.
func (s *GenerationService) Run(ctx context.Context, testCaseID, versionID string) (*RunResult, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	v.uuid("/path/id", testCaseID)
	v.uuid("/json/promptVersionId", versionID)
	if err := v.err(); err != nil {
		return nil, err
	}
	tc, err := s.tc.testCase(ctx, p, testCaseID)
	if err != nil {
		return nil, err
	}
	if err := s.checkVersion(ctx, p, tc.PromptID, versionID); err != nil {
		return nil, err
	}
	res, err := s.start(ctx, p, tc.PromptID, versionID, []*TestCase{tc})
	if err != nil {
		return nil, err
	}
	res.GenerationID = res.GenerationIDs[0]
	return res, nil
}

// RunBatch runs many test cases of a canvas against one of its versions
// under one execution id. It requires the editor role. The selection is
// TestCaseIDs (each a live test case of the canvas), or the test cases
// assigned at least one of TagIDs (each a live tag of the canvas), or,
// with neither, every live test case of the canvas. Giving both, or a
// selection with no test case, is VALIDATION; unknown ids are NOT_FOUND, as
// is a version that is not a live version of the canvas. Every generation
// and its job commit in one transaction before RunBatch returns.
func (s *GenerationService) RunBatch(ctx context.Context, params BatchParams) (*RunResult, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	v.uuid("/json/promptId", params.PromptID)
	v.uuid("/json/promptVersionId", params.PromptVersionID)
	var ids, tagIDs []string
	switch {
	case params.TestCaseIDs != nil && params.TagIDs != nil:
		v.add("/json/tagIds", "cannot be combined with testCaseIds")
	case params.TestCaseIDs != nil:
		ids = v.ids("/json/testCaseIds", params.TestCaseIDs)
	case params.TagIDs != nil:
		tagIDs = v.ids("/json/tagIds", params.TagIDs)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if _, err := s.tc.canvas(ctx, p, params.PromptID); err != nil {
		return nil, err
	}
	if err := s.checkVersion(ctx, p, params.PromptID, params.PromptVersionID); err != nil {
		return nil, err
	}
	list, err := s.selectTestCases(ctx, p, params.PromptID, ids, tagIDs)
	if err != nil {
		return nil, err
	}
	return s.start(ctx, p, params.PromptID, params.PromptVersionID, list)
}

// selectTestCases returns the live test cases of canvas promptID that a
// batch runs: those of ids, or those assigned any of tagIDs, or all.
func (s *GenerationService) selectTestCases(ctx context.Context, p *canvas.Principal, promptID string, ids, tagIDs []string) ([]*TestCase, error) {
	f := Filter{WorkspaceID: p.WorkspaceID, PromptID: promptID}
	path := "/json/testCaseIds"
	switch {
	case ids != nil:
		found, err := s.tc.store.ListTestCases(ctx, Filter{WorkspaceID: p.WorkspaceID, IDs: ids})
		if err != nil {
			return nil, err
		}
		if len(found) != len(ids) {
			return nil, canvas.NotFound("test case")
		}
		if err := sameCanvas(path, ids, promptID, found, func(tc *TestCase) (string, string) {
			return tc.ID, tc.PromptID
		}); err != nil {
			return nil, err
		}
		return found, nil
	case tagIDs != nil:
		path = "/json/tagIds"
		tags, err := s.tc.store.ListTags(ctx, p.WorkspaceID, "", tagIDs)
		if err != nil {
			return nil, err
		}
		if len(tags) != len(tagIDs) {
			return nil, canvas.NotFound("tag")
		}
		if err := sameCanvas(path, tagIDs, promptID, tags, func(t *Tag) (string, string) {
			return t.ID, t.PromptID
		}); err != nil {
			return nil, err
		}
		f.TagIDs = tagIDs
	}
	list, err := s.tc.store.ListTestCases(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, canvas.Invalid("No test case matches the selection.",
			canvas.Detail{Path: path, Message: "selects no test case"})
	}
	return list, nil
}

// sameCanvas returns VALIDATION naming, at path/<index in ids>, every row
// of found that belongs to another canvas than promptID.
func sameCanvas[T any](path string, ids []string, promptID string, found []T, key func(T) (id, promptID string)) error {
	canvasOf := make(map[string]string, len(found))
	for _, r := range found {
		id, c := key(r)
		canvasOf[id] = c
	}
	var v validator
	for i, id := range ids {
		if canvasOf[id] != promptID {
			v.add(fmt.Sprintf("%s/%d", path, i), "belongs to another canvas")
		}
	}
	return v.err()
}

// checkVersion returns NOT_FOUND unless versionID is a live version of
// canvas promptID.
func (s *GenerationService) checkVersion(ctx context.Context, p *canvas.Principal, promptID, versionID string) error {
	ver, err := s.tc.canvases.GetVersion(ctx, p.WorkspaceID, versionID)
	if err != nil {
		return err
	}
	if ver.PromptID != promptID {
		return canvas.NotFound("version")
	}
	return nil
}

// start writes one generation and its job per test case, under a new
// execution id, in one transaction, then wakes the worker.
func (s *GenerationService) start(ctx context.Context, p *canvas.Principal, promptID, versionID string, list []*TestCase) (*RunResult, error) {
	res := &RunResult{ExecutionID: s.newID(), TestCaseIDs: make([]string, len(list)),
		GenerationIDs: make([]string, len(list))}
	gens := make([]*Generation, len(list))
	jobs := make([]*queue.Job, len(list))
	// The includes are resolved once, when the generations are asked for:
	// each runs what they were then, however long its job waits.
	includes, err := s.runner.Pin(ctx, promptID, versionID)
	if err != nil {
		return nil, err
	}
	for i, tc := range list {
		in := newGenerationInput(p, tc)
		in.Includes = includes
		payload, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		gens[i] = &Generation{WorkspaceID: p.WorkspaceID, TestCaseID: tc.ID, PromptID: promptID,
			PromptVersionID: versionID, ExecutionID: res.ExecutionID, Status: GenerationInitializing}
		jobs[i] = &queue.Job{WorkspaceID: p.WorkspaceID, Kind: JobKindGenerate, Payload: payload,
			MaxAttempts: generationMaxAttempts}
		res.TestCaseIDs[i] = tc.ID
	}
	if err := s.store.CreateGenerations(ctx, gens, jobs); err != nil {
		return nil, err
	}
	for i, g := range gens {
		res.GenerationIDs[i] = g.ID
	}
	s.notify()
	return res, nil
}

// GetGeneration returns a generation. It requires the viewer role; a
// malformed id is VALIDATION.
func (s *GenerationService) GetGeneration(ctx context.Context, id string) (*Generation, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.generation(ctx, p, id)
}

// AbortGeneration stops a generation that has not finished: it is aborted
// and its job cancelled in one transaction, then the model call of a
// handler running in this process is cancelled at once. A handler that
// returns afterwards does not overwrite aborted. It requires the editor
// role; a generation that has already finished is CONFLICT.
func (s *GenerationService) AbortGeneration(ctx context.Context, id string) (*Generation, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if _, err := s.generation(ctx, p, id); err != nil {
		return nil, err
	}
	g, err := s.store.AbortGeneration(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	s.cancel(id)
	return g, nil
}

// GetExecution summarises the generations of an execution: counts by
// status and the pass rate of the graded ones. It requires the viewer
// role; a malformed id is VALIDATION, an unknown one NOT_FOUND.
func (s *GenerationService) GetExecution(ctx context.Context, id string) (*Execution, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if err := checkPathID("executionId", id); err != nil {
		return nil, err
	}
	e, err := s.store.GetExecution(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.tc.canvas(ctx, p, e.PromptID); err != nil {
		return nil, err
	}
	return e, nil
}

// generation returns a generation whose canvas the principal may reach.
func (s *GenerationService) generation(ctx context.Context, p *canvas.Principal, id string) (*Generation, error) {
	if err := checkPathID("id", id); err != nil {
		return nil, err
	}
	g, err := s.store.GetGeneration(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.tc.canvas(ctx, p, g.PromptID); err != nil {
		return nil, err
	}
	return g, nil
}

// checkPathID returns VALIDATION at /path/<name> unless id is a UUID.
func checkPathID(name, id string) error {
	var v validator
	v.uuid("/path/"+name, id)
	return v.err()
}
