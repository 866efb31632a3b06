package testcase

import (
	"context"
	"encoding/json"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// CreateParams are the fields of a new test case. The JSON names are those
// of the request body of POST /test-case.
type CreateParams struct {
	// PromptID is the canvas the test case belongs to; required.
	PromptID string `json:"promptId"`
	// Title is at most MaxTitleLength characters; it may be empty.
	Title                string               `json:"title"`
	Messages             []Message            `json:"messages"`
	Variables            map[string]any       `json:"variables"`
	VariablesRichContent map[string]any       `json:"variablesRichContent"`
	Files                []File               `json:"files"`
	ExpectedOutput       *string              `json:"expectedOutput"`
	Evaluator            *Evaluator           `json:"evaluator"`
	Answers              map[string]AnswerSet `json:"answers"`
	PromptApplicationID  *string              `json:"promptApplicationId"`
	Metadata             *Metadata            `json:"metadata"`
}

// ListParams select the test cases List returns.
type ListParams struct {
	// PromptID is the canvas whose test cases are listed; required.
	PromptID string
	// IncludeGenerations fills each test case's Generations, newest first.
	IncludeGenerations bool
	// PromptVersionIDs, when not empty, keeps only the generations of these
	// versions among those included. It never removes a test case from the
	// list, and has no effect without IncludeGenerations; a version of
	// another canvas simply matches no generation.
	PromptVersionIDs []string
}

// CreateTestCase creates a test case of a canvas. It requires the editor
// role and write access to the canvas.
func (s *Service) CreateTestCase(ctx context.Context, params CreateParams) (*TestCase, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	v.uuid("/json/promptId", params.PromptID)
	v.title("/json/title", params.Title)
	v.messages("/json/messages", params.Messages)
	v.files("/json/files", params.Files)
	v.evaluator("/json/evaluator", params.Evaluator)
	if params.PromptApplicationID != nil {
		v.uuid("/json/promptApplicationId", *params.PromptApplicationID)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, params.PromptID); err != nil {
		return nil, err
	}
	tc := &TestCase{
		WorkspaceID:          p.WorkspaceID,
		PromptID:             params.PromptID,
		Title:                params.Title,
		Messages:             params.Messages,
		Variables:            params.Variables,
		VariablesRichContent: params.VariablesRichContent,
		Files:                params.Files,
		ExpectedOutput:       params.ExpectedOutput,
		Evaluator:            params.Evaluator,
		Answers:              normalizeAnswers(params.Answers),
		PromptApplicationID:  params.PromptApplicationID,
		Metadata:             params.Metadata,
		CreatedBy:            p.Actor(),
		UpdatedBy:            p.Actor(),
	}
	if err := s.store.CreateTestCase(ctx, tc); err != nil {
		return nil, err
	}
	return tc, nil
}

// GetTestCase returns a live test case with its tags. It requires the viewer
// role.
func (s *Service) GetTestCase(ctx context.Context, id string) (*TestCase, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.testCase(ctx, p, id)
}

// ListTestCases returns the live test cases of a canvas, oldest first, each
// with its tags and, when asked, its generations. It requires the viewer
// role.
func (s *Service) ListTestCases(ctx context.Context, params ListParams) ([]*TestCase, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, params.PromptID); err != nil {
		return nil, err
	}
	list, err := s.store.ListTestCases(ctx, Filter{WorkspaceID: p.WorkspaceID, PromptID: params.PromptID})
	if err != nil {
		return nil, err
	}
	if !params.IncludeGenerations {
		return list, nil
	}
	var gens map[string][]*Generation
	if s.generations != nil && len(list) > 0 {
		ids := make([]string, len(list))
		for i, tc := range list {
			ids[i] = tc.ID
		}
		gens, err = s.generations.ListGenerations(ctx, GenerationFilter{
			WorkspaceID: p.WorkspaceID, TestCaseIDs: ids, PromptVersionIDs: params.PromptVersionIDs,
		})
		if err != nil {
			return nil, err
		}
	}
	for _, tc := range list {
		tc.Generations = gens[tc.ID]
		if tc.Generations == nil {
			tc.Generations = []*Generation{}
		}
	}
	return list, nil
}

// UpdateTestCase applies a partial update to a test case and returns it. It
// requires the editor role. The canvas of a test case cannot change.
func (s *Service) UpdateTestCase(ctx context.Context, id string, upd Update) (*TestCase, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if upd.Title != nil {
		v.title("/json/title", *upd.Title)
	}
	if upd.Messages != nil {
		v.messages("/json/messages", *upd.Messages)
	}
	if upd.Files != nil {
		v.files("/json/files", *upd.Files)
	}
	if upd.Evaluator != nil {
		v.evaluator("/json/evaluator", *upd.Evaluator)
	}
	if upd.PromptApplicationID != nil && *upd.PromptApplicationID != nil {
		v.uuid("/json/promptApplicationId", **upd.PromptApplicationID)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if upd.Answers != nil {
		a := normalizeAnswers(*upd.Answers)
		upd.Answers = &a
	}
	if _, err := s.testCase(ctx, p, id); err != nil {
		return nil, err
	}
	return s.store.UpdateTestCase(ctx, UpdateTestCaseParams{WorkspaceID: p.WorkspaceID, ID: id, Update: upd,
		By: p.Actor()})
}

// DeleteTestCase soft-deletes a test case: it vanishes from lists and reads
// as NOT_FOUND. It requires the editor role.
func (s *Service) DeleteTestCase(ctx context.Context, id string) error {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return err
	}
	if _, err := s.testCase(ctx, p, id); err != nil {
		return err
	}
	return s.store.DeleteTestCase(ctx, p.WorkspaceID, id)
}

// normalizeAnswers returns answers with every missing array made empty, so
// that each entry reads with good, bad and evals arrays.
func normalizeAnswers(answers map[string]AnswerSet) map[string]AnswerSet {
	if answers == nil {
		return nil
	}
	out := make(map[string]AnswerSet, len(answers))
	for k, a := range answers {
		if a.Good == nil {
			a.Good = []json.RawMessage{}
		}
		if a.Bad == nil {
			a.Bad = []json.RawMessage{}
		}
		if a.Evals == nil {
			a.Evals = []json.RawMessage{}
		}
		out[k] = a
	}
	return out
}
