package testcase_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// ExampleService_BulkAddTags creates two test cases of a canvas, tags both
// twice with one bulk call, repeats the call (nothing changes: it is
// idempotent), and prints each test case's tags, which are ordered by name.
func ExampleService_BulkAddTags() {
	dir, err := os.MkdirTemp("", "testcase-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ws := &canvas.Workspace{Name: "acme"}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		log.Fatal(err)
	}
	project := &canvas.Project{Name: "support", WorkspaceID: ws.ID}
	if err := db.CreateProject(ctx, project); err != nil {
		log.Fatal(err)
	}
	c := &canvas.Canvas{Title: "Calculator", ProjectID: &project.ID, WorkspaceID: ws.ID,
		InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CustomTags: []string{}, CreatedBy: "ada", UpdatedBy: "ada"}
	if err := db.CreateCanvas(ctx, c); err != nil {
		log.Fatal(err)
	}

	svc := testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	var caseIDs, tagIDs []string
	for _, sum := range []string{"2+2", "3+3"} {
		tc, err := svc.CreateTestCase(ctx, testcase.CreateParams{PromptID: c.ID, Title: sum,
			Variables: map[string]any{"sum": sum}})
		if err != nil {
			log.Fatal(err)
		}
		caseIDs = append(caseIDs, tc.ID)
	}
	for _, name := range []string{"smoke", "arithmetic"} {
		tag, err := svc.CreateTag(ctx, testcase.CreateTagParams{PromptID: c.ID, Name: name, Color: "#3366ff"})
		if err != nil {
			log.Fatal(err)
		}
		tagIDs = append(tagIDs, tag.ID)
	}
	for range 2 {
		res, err := svc.BulkAddTags(ctx, testcase.BulkTagParams{TestCaseIDs: caseIDs, TagIDs: tagIDs})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("added %d, skipped %d\n", res.Added, res.Skipped)
	}
	list, err := svc.ListTestCases(ctx, testcase.ListParams{PromptID: c.ID})
	if err != nil {
		log.Fatal(err)
	}
	for _, tc := range list {
		fmt.Print(tc.Title, ":")
		for _, tag := range tc.Tags {
			fmt.Print(" ", tag.Name)
		}
		fmt.Println()
	}
	// Output:
	// added 4, skipped 0
	// added 0, skipped 4
	// 2+2: arithmetic smoke
	// 3+3: arithmetic smoke
}
