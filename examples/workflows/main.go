// Command workflows runs Prompt Canvas in-process to run a workflow: the
// version drafts a note with an llm step (the offline echo model), branches
// on the draft's length with a condition, pauses for an editor's review,
// and finishes with an output step. The program starts the run through a
// completion, approves the review through the Go API, waits for the run to
// complete, and prints its steps.
//
//	go run ./examples/workflows
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// spec is the workflow: topic → draft → long enough? → review → publish →
// result, or, when the draft is short, → expand → result.
const spec = `{
  "specVersion": "1",
  "timeoutSeconds": 600,
  "nodes": [
    {"id": "start", "name": "Topic", "actionId": "input",
     "config": {"variables": [{"name": "topic", "type": "text", "required": true}]}},
    {"id": "draft", "name": "Draft", "actionId": "llm",
     "config": {"model": "echo", "messages": [
       {"role": "system", "content": "You write short product notes."},
       {"role": "user", "content": "Write a note about {{topic}}."}]}},
    {"id": "check", "name": "Long enough?", "actionId": "condition",
     "config": {"branches": [{"port": "long", "when": "len(steps.draft.output) > 40"}], "default": "short"}},
    {"id": "review", "name": "Editor review", "actionId": "review",
     "config": {"instructions": "Approve the draft, or reject it with a comment."}},
    {"id": "publish", "name": "Publish", "actionId": "template",
     "config": {"template": "APPROVED ({{steps.review.output.comment}}): {{steps.draft.output}}"}},
    {"id": "expand", "name": "Too short", "actionId": "template",
     "config": {"template": "TOO SHORT: {{steps.draft.output}}"}},
    {"id": "result", "name": "Result", "actionId": "output"}
  ],
  "edges": [
    {"from": {"node": "start", "port": "out"}, "to": {"node": "draft", "port": "in"}},
    {"from": {"node": "draft", "port": "out"}, "to": {"node": "check", "port": "in"}},
    {"from": {"node": "check", "port": "long"}, "to": {"node": "review", "port": "in"}},
    {"from": {"node": "check", "port": "short"}, "to": {"node": "expand", "port": "in"}},
    {"from": {"node": "review", "port": "approved"}, "to": {"node": "publish", "port": "in"}},
    {"from": {"node": "publish", "port": "out"}, "to": {"node": "result", "port": "in"}},
    {"from": {"node": "expand", "port": "out"}, "to": {"node": "result", "port": "in"}}
  ]
}`

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the whole walk-through and writes its report to w. The report
// holds names, statuses and outputs only, never ids or times, so it is the
// same on every run.
func run(ctx context.Context, w io.Writer) error {
	// The engine runs workflow versions through completions, its llm
	// steps call models as completions do, and its background work runs
	// the workflow runs.
	d, ctx, err := demo.Open(ctx, "workflows", canvas.RoleEditor, engine.Options{})
	if err != nil {
		return err
	}
	defer d.Close()

	c, err := d.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Product notes"})
	if err != nil {
		return err
	}
	v, err := d.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Title: "Draft and review",
		IsWorkflow: true, WorkflowSpec: json.RawMessage(spec)})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "version %q: workflow=%v, %d nodes in its graph\n", v.Title, v.IsWorkflow, nodeCount(v.Graph))

	// A sync completion waits until the run ends or pauses: this one
	// pauses at the review.
	started, err := d.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, VersionID: v.ID,
		Variables: map[string]any{"topic": "the new espresso machine"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "completion answered: workflow run %s\n", started.WorkflowStatus)

	if _, err := d.Workflows.Review(ctx, started.ID, workflow.ReviewParams{Approved: true, Comment: "ship it"}); err != nil {
		return err
	}
	fmt.Fprintln(w, "review: approved")

	done, err := await(ctx, d.Workflows, started.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "run %s in environment %s\n", done.Status, done.Environment)
	for _, st := range done.Steps {
		fmt.Fprintf(w, "  %-8s %-10s %-10s %s\n", st.ID, st.ActionID, st.Status, st.Output)
	}
	var text string
	if err := json.Unmarshal(done.Output.Output, &text); err != nil {
		return err
	}
	fmt.Fprintf(w, "output (%s): %s\n", done.Output.ID, text)
	return nil
}

// await reads the run until it has ended.
func await(ctx context.Context, svc *workflow.Service, id string) (*workflow.View, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		v, err := svc.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if workflow.Terminal(v.Status) {
			return v, nil
		}
		if time.Now().After(deadline) {
			return nil, errors.New("the run did not end in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func nodeCount(graph json.RawMessage) int {
	var g workflow.Graph
	_ = json.Unmarshal(graph, &g)
	return len(g.Nodes)
}
