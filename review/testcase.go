package review

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// TestCaseSource is the metadata source of a test case made from a
// queued run.
const TestCaseSource = "review"

// CreateTestCase makes a test case of the item's canvas from its run: the
// run's variables, the messages its request added after its version's
// own (a request's extra messages, with their roles), and, when the item
// was marked good, the run's output as the expected output. It requires
// the editor role and access to the canvas (testcase.Service decides,
// for the principal in ctx). A run or version that is gone is NOT_FOUND.
func (s *Service) CreateTestCase(ctx context.Context, id string) (*testcase.TestCase, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	it, err := s.item(ctx, p, id)
	if err != nil {
		return nil, err
	}
	run, err := s.runs.GetRun(ctx, p.WorkspaceID, it.RunID)
	if err != nil {
		return nil, err
	}
	ver, err := s.canvases.GetVersion(ctx, p.WorkspaceID, run.VersionID)
	if err != nil {
		return nil, err
	}
	params := testcase.CreateParams{PromptID: it.PromptID, Title: "Run " + run.ID,
		Messages: extraMessages(run, ver), Variables: run.Variables,
		Metadata: &testcase.Metadata{Source: TestCaseSource}}
	if a := it.Annotation; a != nil && a.Passed {
		if out, ok := output(run); ok {
			params.ExpectedOutput = &out
		}
	}
	return s.testCases.CreateTestCase(ctx, params)
}

// extraMessages returns the messages run's request has after those its
// version rendered (one per live message of the version): the request's
// own messages, which a test case appends to the version's when it runs.
// Tool calls are left out: a test case's messages are role and content.
func extraMessages(run *completion.Run, ver *canvas.Version) []testcase.Message {
	n := 0
	for _, m := range ver.Messages {
		if m.DeletedAt == nil {
			n++
		}
	}
	msgs := run.Request.Messages
	out := []testcase.Message{}
	if n >= len(msgs) {
		return out
	}
	for _, m := range msgs[n:] {
		role := m.Role
		if !canvas.ValidMessageRole(role) {
			// A tool result is a function message to a test case, which
			// keeps no tool calls.
			role = canvas.RoleFunction
		}
		out = append(out, testcase.Message{Role: role, Content: m.Content})
	}
	return out
}

// output returns the text a completed run answered.
func output(run *completion.Run) (string, bool) {
	if run.Status != completion.StatusCompleted || run.Result == nil || len(run.Result.Choices) == 0 {
		return "", false
	}
	return run.Result.Choices[0].Message.Content.Text, true
}
