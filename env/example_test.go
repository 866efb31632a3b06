package env_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// Example_publish publishes two versions of a canvas to production, one
// after the other, and prints the production history: the newest
// publication is the one served, the older one was unpublished when the
// newer replaced it.
func Example_publish() {
	dir, err := os.MkdirTemp("", "canvas-example")
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

	// A workspace with one canvas and two versions of it.
	ws := &canvas.Workspace{Name: "acme"}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		log.Fatal(err)
	}
	project := &canvas.Project{Name: "support", WorkspaceID: ws.ID}
	if err := db.CreateProject(ctx, project); err != nil {
		log.Fatal(err)
	}
	c := &canvas.Canvas{
		Title: "Support bot", ProjectID: &project.ID, WorkspaceID: ws.ID,
		InferencesPercentage: "0", LayoutVersion: canvas.LayoutV2, CustomTags: []string{},
		CreatedBy: "ada", UpdatedBy: "ada",
	}
	if err := db.CreateCanvas(ctx, c); err != nil {
		log.Fatal(err)
	}
	var versions []*canvas.Version
	for _, title := range []string{"Friendly", "Concise"} {
		v := &canvas.Version{
			PromptID: c.ID, Title: title, WorkspaceID: ws.ID, Variables: []canvas.Variable{},
			CreatedBy: "ada", UpdatedBy: "ada",
			Messages: []canvas.Message{{Role: canvas.RoleSystem, Content: "Answer " + title + ".", CreatedBy: "ada", UpdatedBy: "ada"}},
		}
		if err := db.CreateVersion(ctx, v); err != nil {
			log.Fatal(err)
		}
		versions = append(versions, v)
	}

	// The service reads the caller from the context.
	svc := env.NewService(env.Options{Store: db, Canvases: db, Changes: db})
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})
	for _, v := range versions {
		if _, _, err := svc.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID}); err != nil {
			log.Fatal(err)
		}
	}

	page, err := svc.History(ctx, env.HistoryParams{CanvasID: c.ID, EnvName: env.Production, Limit: env.DefaultLimit})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s history, %d publications:\n", page.Environment.Name, page.Total)
	for _, pub := range page.Items {
		fmt.Printf("#%d version %d %q active=%t unpublished=%t\n",
			pub.Seq, pub.VersionIndex, pub.Title, pub.IsActive, pub.UnpublishedAt != nil)
	}
	served, err := svc.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: c.ID, EnvName: env.Production})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("served: %q, promoted=%t\n", served.Message.Content, served.Promoted)
	// Output:
	// production history, 2 publications:
	// #2 version 2 "Concise" active=true unpublished=false
	// #1 version 1 "Friendly" active=false unpublished=true
	// served: "Answer Concise.", promoted=true
}
