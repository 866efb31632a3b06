// Command testcases runs Prompt Canvas in-process to test two versions of a
// canvas: it creates four test cases, each graded its own way (exact match,
// contains, regex), tags them, runs every test case of the "regression" tag
// against each version as one batch on a queue worker, and prints each
// execution's pass rate and each test case's outcome.
//
//	go run ./examples/testcases
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/testcase"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the whole walk-through and writes its report to w. The report
// holds titles, counts and outputs only, never ids or times, so it is the
// same on every run.
func run(ctx context.Context, w io.Writer) error {
	// The engine's background work runs the generations.
	d, ctx, err := demo.Open(ctx, "testcases", canvas.RoleAdmin, engine.Options{})
	if err != nil {
		return err
	}
	defer d.Close()

	project, err := d.Canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "Geography"})
	if err != nil {
		return err
	}
	c, err := d.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Capitals", ProjectID: &project.ID})
	if err != nil {
		return err
	}
	// The echo model answers with the rendered prompt, so each version's
	// output is its prompt with the city filled in.
	var versions []*canvas.Version
	for _, v := range []struct{ title, prompt string }{
		{"Sentence", "The capital is {{city}}."},
		{"Terse", "Capital: {{city}}"},
	} {
		ver, err := d.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, Title: v.title,
			Configuration: &canvas.Configuration{Model: model.EchoModel, Type: "chat"},
			Variables:     []canvas.Variable{{Name: "city", Type: canvas.VariableText, Required: true}},
			Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: v.prompt}})
		if err != nil {
			return err
		}
		versions = append(versions, ver)
	}

	smokeIDs, allIDs, err := createTestCases(ctx, d.TestCases, c.ID)
	if err != nil {
		return err
	}
	regression, err := tag(ctx, d.TestCases, c.ID, "regression", allIDs)
	if err != nil {
		return err
	}
	if _, err := tag(ctx, d.TestCases, c.ID, "smoke", smokeIDs); err != nil {
		return err
	}
	fmt.Fprintf(w, "canvas %q: %d test cases, %d tagged smoke, %d tagged regression\n",
		c.Title, len(allIDs), len(smokeIDs), len(allIDs))

	for _, v := range versions {
		res, err := d.Generations.RunBatch(ctx, testcase.BatchParams{PromptID: c.ID, PromptVersionID: v.ID,
			TagIDs: []string{regression.ID}})
		if err != nil {
			return err
		}
		e, err := waitExecution(ctx, d.Generations, res.ExecutionID)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "version %d %q: %d/%d passed, pass rate %.0f%%\n",
			v.VersionIndex, v.Title, e.Passed, e.Passed+e.Failed, 100**e.PassRate)
		if err := printOutcomes(ctx, w, d.TestCases, c.ID, v.ID); err != nil {
			return err
		}
	}
	return nil
}

// createTestCases creates the test cases and returns the ids of the smoke
// ones and of all.
func createTestCases(ctx context.Context, svc *testcase.Service, canvasID string) (smoke, all []string, err error) {
	for _, c := range []struct {
		title, city string
		expected    *string
		eval        *testcase.Evaluator
		smoke       bool
	}{
		{"France", "Paris", new("The capital is Paris."), nil, true},
		{"Japan", "Tokyo", new("The capital is Tokyo."), nil, false},
		{"Peru", "Lima", new("Lima"), &testcase.Evaluator{Type: testcase.EvaluatorContains}, true},
		{"Kenya", "Nairobi", nil, &testcase.Evaluator{Type: testcase.EvaluatorRegex, Pattern: `^The capital is [A-Z]\w+\.$`}, false},
	} {
		tc, err := svc.CreateTestCase(ctx, testcase.CreateParams{PromptID: canvasID, Title: c.title,
			Variables: map[string]any{"city": c.city}, ExpectedOutput: c.expected, Evaluator: c.eval})
		if err != nil {
			return nil, nil, err
		}
		all = append(all, tc.ID)
		if c.smoke {
			smoke = append(smoke, tc.ID)
		}
	}
	return smoke, all, nil
}

// tag creates a tag and assigns it to the test cases.
func tag(ctx context.Context, svc *testcase.Service, canvasID, name string, ids []string) (*testcase.Tag, error) {
	t, err := svc.CreateTag(ctx, testcase.CreateTagParams{PromptID: canvasID, Name: name, Color: "#3366ff"})
	if err != nil {
		return nil, err
	}
	_, err = svc.BulkAddTags(ctx, testcase.BulkTagParams{TestCaseIDs: ids, TagIDs: []string{t.ID}})
	return t, err
}

// waitExecution polls an execution until every generation has finished.
func waitExecution(ctx context.Context, svc *testcase.GenerationService, id string) (*testcase.Execution, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		e, err := svc.GetExecution(ctx, id)
		if err != nil || e.Terminal() {
			return e, err
		}
		if time.Now().After(deadline) {
			return nil, errors.New("the execution did not finish in time")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// printOutcomes writes each test case's generation of version versionID.
func printOutcomes(ctx context.Context, w io.Writer, svc *testcase.Service, canvasID, versionID string) error {
	list, err := svc.ListTestCases(ctx, testcase.ListParams{PromptID: canvasID, IncludeGenerations: true,
		PromptVersionIDs: []string{versionID}})
	if err != nil {
		return err
	}
	for _, tc := range list {
		for _, g := range tc.Generations {
			output := ""
			if g.Output != nil {
				output = *g.Output
			}
			fmt.Fprintf(w, "  %-7s %-8s %-9s passed=%-5t output=%q\n", tc.Title, tc.EvaluatorType(), g.Status,
				g.Passed != nil && *g.Passed, output)
		}
	}
	return nil
}
