package canvas_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// Example_createCanvas embeds the service in-process: it opens a SQLite
// store, acts as a user of a workspace, and creates a project, a canvas and
// a version whose prompt is the system message at index 0.
func Example_createCanvas() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "canvas-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ws := &canvas.Workspace{Name: "example"}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		log.Fatal(err)
	}
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	svc := canvas.NewService(canvas.Options{Store: db})

	project, err := svc.CreateProject(ctx, canvas.CreateProjectParams{Name: "support"})
	if err != nil {
		log.Fatal(err)
	}
	c, err := svc.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter", ProjectID: &project.ID})
	if err != nil {
		log.Fatal(err)
	}
	v, err := svc.CreateVersion(ctx, canvas.CreateVersionParams{
		PromptID:      c.ID,
		Configuration: &canvas.Configuration{Model: "echo", Type: "chat"},
		Variables:     []canvas.Variable{{Name: "name", Required: true}},
		Message:       &canvas.MessageInput{Content: "Hello, {{name}}!"},
	})
	if err != nil {
		log.Fatal(err)
	}
	dup, err := svc.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID, OriginVersionID: v.ID})
	if err != nil {
		log.Fatal(err)
	}

	fmt.Println(c.Title, c.LayoutVersion, c.CreatedBy)
	fmt.Println(v.Title, v.VersionIndex, v.Messages[0].Role, *v.Content)
	fmt.Println(dup.Title, dup.VersionIndex, *dup.OriginVersionID == v.ID, *dup.Content)
	// Output:
	// Greeter v1 ada
	// Version 1 1 system Hello, {{name}}!
	// Version 1 (copy) 2 true Hello, {{name}}!
}
