package review_test

import (
	"context"
	"fmt"
	"os"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/review"
)

// Example samples every live run of a canvas into its review queue, marks
// the run good and makes a test case of it, with the run's output as the
// expected output.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "canvas-review-example")
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

	c, err := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter", InferencesPercentage: "100"})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Message: &canvas.MessageInput{Role: canvas.RoleSystem, Content: "Say hi to {{name}}."}})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A live run, as POST /v2/chat/completions makes it.
	if _, err := e.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, VersionID: v.ID,
		Variables: map[string]any{"name": "Ada"}, Live: true}); err != nil {
		fmt.Println(err)
		return
	}
	items, total, err := e.Review.List(ctx, review.ListParams{PromptID: c.ID, Status: review.StatusPending})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pending:", total)

	good := true
	it, err := e.Review.Annotate(ctx, items[0].ID, review.AnnotationInput{Passed: &good})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("status:", it.Status)
	tc, err := e.Review.CreateTestCase(ctx, it.ID)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("test case:", tc.Variables["name"], *tc.ExpectedOutput)
	// Output:
	// pending: 1
	// status: reviewed
	// test case: Ada Say hi to Ada.
}
