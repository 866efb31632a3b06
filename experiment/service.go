package experiment

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/webhook"
)

// JobKindRun is the queue kind of an experiment's job; its RefID is the
// experiment's id.
const JobKindRun = "experiment.run"

// runMaxAttempts bounds the claims of an experiment's job: each claim
// resumes where the last stopped, so it is spent only by crashes and
// failures of the service itself.
const runMaxAttempts = 10

// DefaultConcurrency is how many case runs an experiment runs at once
// when Options.Concurrency is zero.
const DefaultConcurrency = 16

// MaxCommentLength bounds an annotation's comment, in characters.
const MaxCommentLength = 10000

// Environments resolves the version an environment of a canvas publishes:
// env.Service.
type Environments interface {
	ActiveVersion(ctx context.Context, params env.ActiveVersionParams) (*canvas.Version, error)
}

// Models makes the calls of llm-judge evaluators: model.Caller.
type Models interface {
	Target(ctx context.Context, scope model.Scope, want model.Want) (model.Target, error)
	Call(ctx context.Context, workspaceID string, req model.Request, emit func(model.Chunk) error) (*model.Result, error)
}

// Options wire a Service. Store, Canvases, TestCases, Environments and
// Runner are required.
type Options struct {
	Store        Store
	Canvases     canvas.Store
	TestCases    testcase.Store
	Environments Environments
	// Runner runs a test case on a version: completion.Service, so that
	// each candidate answer is a completion run.
	Runner testcase.Runner
	// Models calls the llm-judges' models; nil refuses llm-judge
	// evaluators.
	Models Models
	// Sender posts to webhook evaluators, through the network guard; nil
	// refuses webhook evaluators.
	Sender *webhook.Sender
	// Sealer seals webhook evaluators' secrets at rest and opens them
	// (credential.KeyRing); nil refuses webhook evaluators.
	Sealer Sealer
	// Concurrency bounds the case runs of one experiment at once
	// (DefaultConcurrency when zero). A credential's own bound
	// (model.Caller) applies on top of it.
	Concurrency int
	// Notify, when set, wakes the queue worker after a job is enqueued.
	Notify func()
	// Cancel, when set, stops the job of a cancelled experiment running in
	// this process at once (queue.Worker.Cancel).
	Cancel func(refID string) int
	// EndedJob, when set, returns the job that reports an experiment that
	// ended (experiment.completed), or nil for none. It is called inside
	// the transaction that ends it, so it does no I/O, and the job commits
	// with the end.
	EndedJob func(e *Experiment) (*queue.Job, error)
}

// Service runs experiments and keeps saved evaluators: the in-process API
// the server and embedders call. Every method reads the Principal from its
// context: editors start, cancel, annotate and save evaluators, viewers
// read. An experiment or evaluator inherits the access of its canvas
// (canvas.ReachableCanvas).
type Service struct {
	store       Store
	canvases    canvas.Store
	testCases   testcase.Store
	envs        Environments
	runner      testcase.Runner
	models      Models
	sender      *webhook.Sender
	sealer      Sealer
	concurrency int
	notify      func()
	cancel      func(string) int
	endedJob    func(*Experiment) (*queue.Job, error)
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	s := &Service{store: opts.Store, canvases: opts.Canvases, testCases: opts.TestCases, envs: opts.Environments,
		runner: opts.Runner, models: opts.Models, sender: opts.Sender, sealer: opts.Sealer,
		concurrency: opts.Concurrency, notify: opts.Notify, cancel: opts.Cancel, endedJob: opts.EndedJob}
	if s.concurrency <= 0 {
		s.concurrency = DefaultConcurrency
	}
	if s.notify == nil {
		s.notify = func() {}
	}
	if s.cancel == nil {
		s.cancel = func(string) int { return 0 }
	}
	return s
}

// Start validates req and queues the experiment with its job; it requires
// the editor role. Versions are given by id (VersionIDs, each a live
// version of the canvas) or by environment (Environments, resolved when
// the experiment starts), 1 to MaxVersions; the test cases by id, by tag
// (those assigned any of TagIDs) or, with neither, all of the canvas's;
// 1 to MaxEvaluators evaluators, given whole or by a saved evaluator's id;
// Repetitions 1 to MaxRepetitions (1 when zero). The llm-judges' models
// must be ones the canvas may use (FORBIDDEN otherwise, as for its runs).
// The webhook evaluators' secrets are stored sealed for the experiment.
// A malformed request is VALIDATION listing every problem; unknown ids are
// NOT_FOUND.
func (s *Service) Start(ctx context.Context, req Request) (*Experiment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if !validUUID(req.PromptID) {
		v.add("/json/promptId", "must be a UUID")
	}
	switch {
	case len(req.VersionIDs) > 0 && len(req.Environments) > 0:
		v.add("/json/environments", "cannot be combined with versionIds")
	case len(req.VersionIDs) == 0 && len(req.Environments) == 0:
		v.add("/json/versionIds", "versionIds or environments must name at least one version")
	case len(req.VersionIDs) > MaxVersions:
		v.add("/json/versionIds", "must hold at most %d versions", MaxVersions)
	case len(req.Environments) > MaxVersions:
		v.add("/json/environments", "must hold at most %d environments", MaxVersions)
	}
	for i, id := range req.VersionIDs {
		if !validUUID(id) {
			v.add(fmt.Sprintf("/json/versionIds/%d", i), "must be a UUID")
		} else if slices.Index(req.VersionIDs, id) < i {
			v.add(fmt.Sprintf("/json/versionIds/%d", i), "is named twice")
		}
	}
	for i, name := range req.Environments {
		n, err := canvas.CheckEnvironmentName(name)
		if err != nil {
			v.add(fmt.Sprintf("/json/environments/%d", i), "%s", canvas.ErrorMessage(err))
			continue
		}
		req.Environments[i] = n
		if slices.Index(req.Environments, n) < i {
			v.add(fmt.Sprintf("/json/environments/%d", i), "is named twice")
		}
	}
	if req.TestCaseIDs != nil && req.TagIDs != nil {
		v.add("/json/tagIds", "cannot be combined with testCaseIds")
	}
	v.ids("/json/testCaseIds", req.TestCaseIDs)
	v.ids("/json/tagIds", req.TagIDs)
	switch {
	case req.Repetitions == 0:
		req.Repetitions = 1
	case req.Repetitions < 1 || req.Repetitions > MaxRepetitions:
		v.add("/json/repetitions", "must be between 1 and %d", MaxRepetitions)
	}
	switch {
	case len(req.Evaluators) == 0:
		v.add("/json/evaluators", "must name at least one evaluator")
	case len(req.Evaluators) > MaxEvaluators:
		v.add("/json/evaluators", "must hold at most %d evaluators", MaxEvaluators)
	}
	for i := range req.Evaluators {
		e := &req.Evaluators[i]
		path := fmt.Sprintf("/json/evaluators/%d", i)
		if e.ID != "" {
			if !validUUID(e.ID) {
				v.add(path+"/id", "must be a UUID")
			} else if b, _ := json.Marshal(e); string(b) != `{"id":"`+e.ID+`"}` {
				v.add(path, "names a saved evaluator by its id alone, or gives an evaluator without an id")
			}
			continue
		}
		v.evaluator(path, e, true)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	c, err := canvas.ReachableCanvas(ctx, s.canvases, p, req.PromptID)
	if err != nil {
		return nil, err
	}
	for _, id := range req.VersionIDs {
		ver, err := s.canvases.GetVersion(ctx, p.WorkspaceID, id)
		if err != nil {
			return nil, err
		}
		if ver.PromptID != c.ID {
			return nil, canvas.NotFound("version")
		}
	}
	if err := s.resolveEvaluators(ctx, p, c, req.Evaluators); err != nil {
		return nil, err
	}
	cases, err := s.selectTestCases(ctx, p, c.ID, req.TestCaseIDs, req.TagIDs)
	if err != nil {
		return nil, err
	}
	versions := max(len(req.VersionIDs), len(req.Environments))
	if total := len(cases) * versions * req.Repetitions; total > MaxResults {
		return nil, canvas.Invalid(fmt.Sprintf("The experiment would write %d results, more than %d.", total, MaxResults),
			canvas.Detail{Path: "/json", Message: fmt.Sprintf("test cases × versions × repetitions must be at most %d", MaxResults)})
	}
	// The id is chosen here, for the evaluators' secrets are sealed for it.
	e := &Experiment{ID: uuid.NewString(), WorkspaceID: p.WorkspaceID, PromptID: c.ID, Status: StatusQueued,
		Request: req, TestCaseIDs: cases, Progress: Progress{Total: len(cases) * versions * req.Repetitions},
		CreatedBy: p.Actor(), Runner: Runner{UserID: p.UserID, KeyID: p.KeyID, Projects: p.Projects}}
	for _, id := range req.VersionIDs {
		e.Versions = append(e.Versions, Version{VersionID: id})
	}
	if err := s.sealExperiment(e); err != nil {
		return nil, err
	}
	job := &queue.Job{WorkspaceID: p.WorkspaceID, Kind: JobKindRun, MaxAttempts: runMaxAttempts}
	if err := s.store.CreateExperiment(ctx, e, job); err != nil {
		return nil, err
	}
	s.notify()
	return e.shown(), nil
}

// resolveEvaluators replaces each evaluator given by id with the saved one
// (of the canvas; NOT_FOUND otherwise), checks that names are unique, and
// that each llm-judge's model is one the canvas may use.
func (s *Service) resolveEvaluators(ctx context.Context, p *canvas.Principal, c *canvas.Canvas, list []Evaluator) error {
	var v validator
	for i := range list {
		e := &list[i]
		if e.ID == "" {
			continue
		}
		saved, err := s.store.GetEvaluator(ctx, p.WorkspaceID, e.ID)
		if err != nil {
			return err
		}
		if saved.PromptID != c.ID {
			return canvas.NotFound("evaluator")
		}
		*e = saved.Evaluator
	}
	for i, e := range list {
		path := fmt.Sprintf("/json/evaluators/%d", i)
		if slices.IndexFunc(list, func(o Evaluator) bool { return o.Name == e.Name }) < i {
			v.add(path+"/name", "is the name of an earlier evaluator")
		}
		if e.Name == HumanEvaluator {
			v.add(path+"/name", "is kept for annotations")
		}
		switch e.Type {
		case TypeJudge:
			if s.models == nil {
				v.add(path+"/type", "llm-judge evaluators are not configured on this server")
			}
		case TypeWebhook:
			if s.sender == nil {
				v.add(path+"/type", "webhook evaluators are not configured on this server")
			} else if s.sealer == nil {
				v.add(path+"/type", "webhook evaluators need a secrets key on this server, which seals their secrets")
			}
		}
	}
	if err := v.err(); err != nil {
		return err
	}
	for i, e := range list {
		if e.Type != TypeJudge {
			continue
		}
		path := fmt.Sprintf("/json/evaluators/%d", i)
		if _, err := s.models.Target(ctx, canvasScope(c), model.Want{Model: e.Model, CredentialID: e.CredentialID,
			Path: path + "/model", CredentialPath: path + "/credentialId"}); err != nil {
			return err
		}
	}
	return nil
}

// canvasScope is what the runs of c may use.
func canvasScope(c *canvas.Canvas) model.Scope {
	return model.CanvasScope(c.WorkspaceID, c.ProjectID, c.AllowedCredentials)
}

// selectTestCases returns the ids of the live test cases of canvas
// promptID an experiment runs: those of ids, or those assigned any of
// tagIDs, or all, oldest first.
func (s *Service) selectTestCases(ctx context.Context, p *canvas.Principal, promptID string, ids, tagIDs []string) ([]string, error) {
	f := testcase.Filter{WorkspaceID: p.WorkspaceID, PromptID: promptID}
	path := "/json/promptId"
	switch {
	case ids != nil:
		f.IDs, path = ids, "/json/testCaseIds"
		found, err := s.testCases.ListTestCases(ctx, testcase.Filter{WorkspaceID: p.WorkspaceID, IDs: ids})
		if err != nil {
			return nil, err
		}
		if len(found) != len(distinct(ids)) || slices.ContainsFunc(found, func(tc *testcase.TestCase) bool { return tc.PromptID != promptID }) {
			return nil, canvas.NotFound("test case")
		}
	case tagIDs != nil:
		f.TagIDs, path = tagIDs, "/json/tagIds"
		tags, err := s.testCases.ListTags(ctx, p.WorkspaceID, "", tagIDs)
		if err != nil {
			return nil, err
		}
		if len(tags) != len(distinct(tagIDs)) || slices.ContainsFunc(tags, func(t *testcase.Tag) bool { return t.PromptID != promptID }) {
			return nil, canvas.NotFound("tag")
		}
	}
	list, err := s.testCases.ListTestCases(ctx, f)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, canvas.Invalid("No test case matches the selection.", canvas.Detail{Path: path, Message: "selects no test case"})
	}
	out := make([]string, len(list))
	for i, tc := range list {
		out[i] = tc.ID
	}
	return out, nil
}

func distinct(ids []string) []string {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// ids checks an optional list of ids: when set, not empty, at most
// testcase.MaxBulkIDs, each a UUID.
func (v *validator) ids(path string, ids []string) {
	if ids == nil {
		return
	}
	if len(ids) == 0 {
		v.add(path, "must not be empty")
		return
	}
	if len(ids) > testcase.MaxBulkIDs {
		v.add(path, "must hold at most %d ids", testcase.MaxBulkIDs)
		return
	}
	for i, id := range ids {
		if !validUUID(id) {
			v.add(fmt.Sprintf("%s/%d", path, i), "must be a UUID")
		}
	}
}

// shown returns e as it is shown: evaluators without their secrets.
func (e *Experiment) shown() *Experiment {
	cp := *e
	cp.Request.Evaluators = make([]Evaluator, len(e.Request.Evaluators))
	for i, ev := range e.Request.Evaluators {
		cp.Request.Evaluators[i] = ev.shown()
	}
	if cp.Versions == nil {
		cp.Versions = []Version{}
	}
	return &cp
}

// experiment returns an experiment whose canvas the principal may reach.
func (s *Service) experiment(ctx context.Context, p *canvas.Principal, id string) (*Experiment, error) {
	if !validUUID(id) {
		return nil, canvas.Invalid("Request failed validation.", canvas.Detail{Path: "/path/id", Message: "must be a UUID"})
	}
	e, err := s.store.GetExperiment(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, e.PromptID); err != nil {
		return nil, err
	}
	return e, nil
}

// Get returns an experiment with its progress and each version's totals.
// It requires the viewer role.
func (s *Service) Get(ctx context.Context, id string) (*Experiment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	e, err := s.experiment(ctx, p, id)
	if err != nil {
		return nil, err
	}
	results, _, err := s.store.ListResults(ctx, ResultQuery{WorkspaceID: p.WorkspaceID, ExperimentID: id, WithoutOutput: true})
	if err != nil {
		return nil, err
	}
	e.Versions = totalsOf(e.Versions, results)
	return e.shown(), nil
}

// List returns one page of a canvas's experiments, newest first, with
// their progress and without totals (Get has them). It requires the
// viewer role.
func (s *Service) List(ctx context.Context, q ListQuery) ([]*Experiment, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, q.PromptID); err != nil {
		return nil, 0, err
	}
	q.WorkspaceID = p.WorkspaceID
	list, total, err := s.store.ListExperiments(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	for i, e := range list {
		list[i] = e.shown()
	}
	return list, total, nil
}

// Cancel stops an experiment that has not ended: it is cancelled and its
// job cancelled in one transaction, and its job stops at once when it runs
// in this process. The results written so far stay. It requires the editor
// role; an experiment that has ended is CONFLICT.
func (s *Service) Cancel(ctx context.Context, id string) (*Experiment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	if _, err := s.experiment(ctx, p, id); err != nil {
		return nil, err
	}
	wrote := false
	e, err := s.store.CancelExperiment(ctx, p.WorkspaceID, id, s.outbox(&wrote))
	if err != nil {
		return nil, err
	}
	s.cancel(id)
	if wrote {
		s.notify()
	}
	return e.shown(), nil
}

// outbox returns the outbox of an experiment's end (nil without EndedJob),
// which sets *wrote when it returns a job.
func (s *Service) outbox(wrote *bool) func(*Experiment) (*queue.Job, error) {
	if s.endedJob == nil {
		return nil
	}
	return func(e *Experiment) (*queue.Job, error) {
		j, err := s.endedJob(e.shown())
		*wrote = j != nil
		return j, err
	}
}

// ResultsQuery selects one page of an experiment's results.
type ResultsQuery struct {
	ExperimentID  string
	VersionID     string
	TestCaseID    string
	Limit, Offset int
}

// Results returns one page of an experiment's results, in the order they
// were written, and how many q selects. It requires the viewer role.
func (s *Service) Results(ctx context.Context, q ResultsQuery) ([]*Result, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if _, err := s.experiment(ctx, p, q.ExperimentID); err != nil {
		return nil, 0, err
	}
	rq := ResultQuery{WorkspaceID: p.WorkspaceID, ExperimentID: q.ExperimentID, TestCaseID: q.TestCaseID,
		Limit: max(q.Limit, 1), Offset: q.Offset}
	if q.VersionID != "" {
		rq.VersionIDs = []string{q.VersionID}
	}
	return s.store.ListResults(ctx, rq)
}

// Compare pairs the results of two of an experiment's versions, each named
// by its version id or the environment it was resolved from, and counts
// regressions, improvements and unchanged pairs. It requires the viewer
// role; a name that is none of the experiment's versions is VALIDATION.
func (s *Service) Compare(ctx context.Context, id, baseline, candidate string) (*Comparison, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	e, err := s.experiment(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var v validator
	base, cand := versionOf(e, baseline), versionOf(e, candidate)
	if base == "" {
		v.add("/query/baseline", "is none of the experiment's versions")
	}
	if cand == "" {
		v.add("/query/candidate", "is none of the experiment's versions")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	results, _, err := s.store.ListResults(ctx, ResultQuery{WorkspaceID: p.WorkspaceID, ExperimentID: id,
		VersionIDs: distinct([]string{base, cand})})
	if err != nil {
		return nil, err
	}
	return compare(e, base, cand, results), nil
}

// versionOf returns the id of the experiment's version that name names
// (a version id, or the environment it was resolved from), "" for none.
func versionOf(e *Experiment, name string) string {
	for _, v := range e.Versions {
		if v.VersionID == name || v.Environment != "" && v.Environment == name {
			return v.VersionID
		}
	}
	return ""
}

// Annotate records a person's review of a result: its verdict (Passed,
// required), a score from 0 to 1 and a comment. The result's verdict and
// the experiment's totals follow it. It requires the editor role.
func (s *Service) Annotate(ctx context.Context, experimentID, resultID string, a AnnotationParams) (*Result, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if !validUUID(resultID) {
		v.add("/path/resultId", "must be a UUID")
	}
	if a.Passed == nil {
		v.add("/json/passed", "is required")
	}
	if a.Score != nil && (*a.Score < 0 || *a.Score > 1) {
		v.add("/json/score", "must be between 0 and 1")
	}
	if utf8.RuneCountInString(a.Comment) > MaxCommentLength {
		v.add("/json/comment", "must be at most %d characters", MaxCommentLength)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if _, err := s.experiment(ctx, p, experimentID); err != nil {
		return nil, err
	}
	return s.store.AnnotateResult(ctx, AnnotateParams{WorkspaceID: p.WorkspaceID, ExperimentID: experimentID,
		ResultID: resultID, Annotation: Annotation{Passed: *a.Passed, Score: a.Score, Comment: strings.TrimSpace(a.Comment),
			By: p.Actor()}})
}

// CreateEvaluator saves an evaluator for a canvas's experiments. It
// requires the editor role. A webhook evaluator without a secret is given
// a new one, which this answer shows, and no read shows again; the secret
// is stored sealed. A name the canvas has already given another evaluator
// is CONFLICT.
func (s *Service) CreateEvaluator(ctx context.Context, params CreateEvaluatorParams) (*SavedEvaluator, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if !validUUID(params.PromptID) {
		v.add("/json/promptId", "must be a UUID")
	}
	if params.ID != "" {
		v.add("/json/id", "is given by the server")
	}
	v.evaluator("/json", &params.Evaluator, false)
	if err := v.err(); err != nil {
		return nil, err
	}
	c, err := canvas.ReachableCanvas(ctx, s.canvases, p, params.PromptID)
	if err != nil {
		return nil, err
	}
	if err := s.resolveEvaluators(ctx, p, c, []Evaluator{params.Evaluator}); err != nil {
		return nil, err
	}
	if params.Type == TypeWebhook && params.Secret == "" {
		params.Secret = newSecret()
	}
	params.ID = uuid.NewString()
	sealed, err := s.seal(p.WorkspaceID, savedSecretID(params.ID), params.Evaluator)
	if err != nil {
		return nil, err
	}
	saved := &SavedEvaluator{Evaluator: sealed, WorkspaceID: p.WorkspaceID, PromptID: c.ID, CreatedBy: p.Actor()}
	if err := s.store.CreateEvaluator(ctx, saved); err != nil {
		return nil, err
	}
	saved.Secret, saved.Sealed = params.Secret, nil
	return saved, nil
}

// ListEvaluators returns one page of a canvas's saved evaluators, by name,
// without their secrets. It requires the viewer role.
func (s *Service) ListEvaluators(ctx context.Context, q EvaluatorQuery) ([]*SavedEvaluator, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, q.PromptID); err != nil {
		return nil, 0, err
	}
	list, total, err := s.store.ListEvaluators(ctx, p.WorkspaceID, q)
	if err != nil {
		return nil, 0, err
	}
	for _, e := range list {
		e.Evaluator = e.Evaluator.shown()
	}
	return list, total, nil
}
