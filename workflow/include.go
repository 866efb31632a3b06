package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// IncludeResolver resolves the includes ({{> CANVAS_ID}}, {{> CANVAS_ID@ENV}},
// {{> CANVAS_ID@vN}}: canvas.IncludeRef) of an llm node's messages with the
// rules of a completion's: env.Service implements it. CheckIncludes checks
// them for the principal of ctx when a run starts; Resolve replaces them
// when the step executes.
type IncludeResolver interface {
	canvas.IncludeChecker
	Resolve(ctx context.Context, ver *canvas.Version, pins []canvas.Include) (*env.Resolution, error)
}

var _ IncludeResolver = (*env.Service)(nil)

// includeChecker is an Executor whose configuration may include canvases:
// Service.start has it check them for the caller.
type includeChecker interface {
	checkIncludes(ctx context.Context, canvasID, path string) error
}

// checkIncludes checks, for the principal of ctx, the includes of the
// nodes of w that the run executes (span, nil for all): a missing canvas,
// environment or version, a canvas the caller cannot read, a cycle or
// nesting too deep is VALIDATION naming the node's message and the chain.
func (w *Workflow) checkIncludes(ctx context.Context, canvasID string, span map[string]bool) error {
	for i, n := range w.Spec.Nodes {
		if span != nil && !span[n.ID] {
			continue
		}
		cn := w.Node(n.ID)
		if cn == nil {
			continue
		}
		c, ok := cn.Executor.(includeChecker)
		if !ok {
			continue
		}
		if err := c.checkIncludes(ctx, canvasID, fmt.Sprintf("/version/workflowSpec/nodes/%d", i)); err != nil {
			return err
		}
	}
	return nil
}

// SpecMessages returns the contents of the messages of spec's llm nodes
// that may hold includes, each at its JSON pointer under
// /json/workflowSpec, for the include checks of a version's save
// (canvas.WorkflowCompiler). A spec that does not decode has none: the
// compiler reports it.
func (s *Service) SpecMessages(spec json.RawMessage) []canvas.MessageContent {
	var sp Spec
	if json.Unmarshal(spec, &sp) != nil {
		return nil
	}
	var out []canvas.MessageContent
	for i, n := range sp.Nodes {
		if n.ActionID != ActionLLM {
			continue
		}
		var cfg llmConfig
		if decodeConfig(n.Config, &cfg) != nil {
			continue
		}
		for j, m := range cfg.Messages {
			if canvas.HasIncludes(m.Content) {
				out = append(out, canvas.MessageContent{
					Path:    fmt.Sprintf("/json/workflowSpec/nodes/%d/config/messages/%d/content", i, j),
					Content: m.Content})
			}
		}
	}
	return out
}

// hasIncludes reports whether one of messages holds a well-formed include.
func hasIncludes(messages []canvas.Message) bool {
	for _, m := range messages {
		if len(canvas.ParseIncludes(m.Content)) > 0 {
			return true
		}
	}
	return false
}

// checkIncludes checks the includes of the node's messages for the
// principal of ctx, the messages named under path (the node's pointer).
func (e *llmExecutor) checkIncludes(ctx context.Context, canvasID, path string) error {
	if !e.hasIncludes {
		return nil
	}
	if e.includes == nil {
		return errNoIncludes()
	}
	contents := make([]canvas.MessageContent, 0, len(e.messages))
	for i, m := range e.messages {
		if canvas.HasIncludes(m.Content) {
			contents = append(contents, canvas.MessageContent{
				Path: fmt.Sprintf("%s/config/messages/%d/content", path, i), Content: m.Content})
		}
	}
	return e.includes.CheckIncludes(ctx, canvasID, contents)
}

// resolveIncludes returns the node's messages with their includes
// replaced, the template over the resolved texts, and what the includes
// resolved to. A step runs in the name of its run, whose start checked
// that its caller reaches every include: it resolves them as a viewer of
// the run's workspace (as the user who started the run, when a user did,
// so that the user's personal drafts resolve), against what is published
// when it executes.
func (e *llmExecutor) resolveIncludes(ctx context.Context, in *StepInput) ([]canvas.Message, stepTemplate, []canvas.Include, error) {
	if !e.hasIncludes {
		return e.messages, e.tmpl, nil, nil
	}
	if e.includes == nil {
		return nil, stepTemplate{}, nil, errNoIncludes()
	}
	p := &canvas.Principal{WorkspaceID: in.WorkspaceID, Role: canvas.RoleViewer}
	// The actor is a user's id, "key:<id>" for an API key, or "system"
	// (canvas.Principal.Actor).
	if by := in.StartedBy; by != "" && by != "system" && !strings.HasPrefix(by, "key:") {
		p.UserID = by
	}
	pctx := canvas.NewContext(ctx, p)
	res, err := e.includes.Resolve(pctx, &canvas.Version{PromptID: in.CanvasID, WorkspaceID: in.WorkspaceID,
		Messages: e.messages}, nil)
	if err != nil {
		if canvas.ErrorCode(err) != canvas.EINVALID {
			return nil, stepTemplate{}, nil, err
		}
		var why []string
		for _, d := range canvas.ErrorDetails(err) {
			why = append(why, d.Message)
		}
		return nil, stepTemplate{}, nil, stepError(canvas.EINVALID,
			"The step's messages include canvases that cannot be resolved: %s.", strings.Join(why, "; "))
	}
	texts := make([]string, len(res.Messages))
	for i, m := range res.Messages {
		texts[i] = m.Content
	}
	return res.Messages, newTemplate(texts...), res.Includes, nil
}

func errNoIncludes() error {
	return stepError(canvas.EINVALID, "The step's messages include canvases, and this service resolves no includes for llm steps.")
}
