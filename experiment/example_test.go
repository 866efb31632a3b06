package experiment_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// Example runs a canvas's test cases against two versions on the echo
// model, scores them with a rule, and compares the versions.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "canvas-experiment-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	e, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	go e.Run(ctx)
	if _, _, err := e.Bootstrap(ctx, ""); err != nil {
		fmt.Println(err)
		return
	}
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})

	c, _ := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Capitals"})
	vars := []canvas.Variable{{Name: "city", Type: canvas.VariableText, Required: true}}
	v1, _ := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Variables: vars,
		Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: "{{city}}"}})
	v2, _ := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Variables: vars,
		Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: "The capital is {{city}}."}})
	for _, city := range []string{"Paris", "Rome"} {
		if _, err := e.TestCases.CreateTestCase(ctx, testcase.CreateParams{PromptID: c.ID,
			Variables: map[string]any{"city": city}, ExpectedOutput: &city}); err != nil {
			fmt.Println(err)
			return
		}
	}

	x, err := e.Experiments.Start(ctx, experiment.Request{PromptID: c.ID, VersionIDs: []string{v1.ID, v2.ID},
		Evaluators: []experiment.Evaluator{{Name: "exact", Type: testcase.EvaluatorExact},
			{Name: "mentions", Type: testcase.EvaluatorContains}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	for !x.Terminal() {
		time.Sleep(20 * time.Millisecond)
		if x, err = e.Experiments.Get(ctx, x.ID); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(x.Status, x.Progress.Done, "results")
	for i, v := range x.Versions {
		fmt.Printf("v%d: passed %d of %d, mean exact %.1f, mean mentions %.1f\n", i+1, v.Totals.Passed,
			v.Totals.Cases, v.Totals.Scores["exact"], v.Totals.Scores["mentions"])
	}
	cmp, _ := e.Experiments.Compare(ctx, x.ID, v1.ID, v2.ID)
	fmt.Println("regressions:", cmp.Regressions, "improvements:", cmp.Improvements)
	// Output:
	// completed 4 results
	// v1: passed 2 of 2, mean exact 1.0, mean mentions 1.0
	// v2: passed 0 of 2, mean exact 0.0, mean mentions 1.0
	// regressions: 2 improvements: 0
}
