// Command embed runs Prompt Canvas in-process, without the HTTP server: it
// opens a SQLite store in a temporary directory, bootstraps the default
// workspace, acts as an admin user of it, and creates a project, a canvas
// and two versions. It publishes version 1 to production and version 2 to a
// custom environment, then promotes version 2, and prints what each
// environment's history holds.
//
//	go run ./examples/embed
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the whole walk-through and writes its report to w. The report
// holds titles, positions and states only, never ids or times, so it is the
// same on every run.
func run(ctx context.Context, w io.Writer) error {
	// A new database gets the default workspace and an admin API key, as
	// canvasd does on its first start. In-process, the caller is a
	// Principal put in the context: here an admin user of that workspace.
	d, ctx, err := demo.Open(ctx, "embed", canvas.RoleAdmin, engine.Options{})
	if err != nil {
		return err
	}
	defer d.Close()
	ws, canvases, envs := d.Workspace, d.Canvases, d.Environments

	project, err := canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "Support"})
	if err != nil {
		return err
	}
	c, err := canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter", ProjectID: &project.ID})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "canvas %q in project %q, workspace %q\n", c.Title, project.Name, ws.Name)

	// Each version's prompt is its system message at index 0.
	var versions []*canvas.Version
	for _, v := range []struct{ title, prompt string }{
		{"Formal", "Greet {{name}} formally."},
		{"Friendly", "Say hi to {{name}}."},
	} {
		ver, err := canvases.CreateVersion(ctx, canvas.CreateVersionParams{
			PromptID:      c.ID,
			Title:         v.title,
			Configuration: &canvas.Configuration{Model: "echo", Type: "chat"},
			Variables:     []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
			Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: v.prompt},
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "version %d %q: %s\n", ver.VersionIndex, ver.Title, *ver.Content)
		versions = append(versions, ver)
	}
	v1, v2 := versions[0], versions[1]

	// Version 1 goes to production; version 2 to a custom environment,
	// which must be created first.
	if _, _, err := envs.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v1.ID}); err != nil {
		return err
	}
	staging, err := envs.CreateEnvironment(ctx, env.CreateEnvironmentParams{CanvasID: c.ID, Name: "staging"})
	if err != nil {
		return err
	}
	if _, _, err := envs.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: staging.Name, VersionID: v2.ID}); err != nil {
		return err
	}
	if err := printHistory(ctx, w, envs, c.ID, env.Production, staging.Name); err != nil {
		return err
	}

	// Promoting version 2 publishes it to production: promoted and
	// production are one fact.
	if _, err := canvases.UpdateVersion(ctx, v2.ID, canvas.VersionUpdate{Promoted: new(true)}); err != nil {
		return err
	}
	fmt.Fprintln(w, "promoted version 2")
	if err := printHistory(ctx, w, envs, c.ID, env.Production); err != nil {
		return err
	}

	served, err := envs.ActiveVersion(ctx, env.ActiveVersionParams{CanvasID: c.ID, EnvName: env.Production})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "production serves version %d %q (promoted=%t): %s\n",
		served.VersionIndex, served.Title, served.Promoted, served.Message.Content)
	return nil
}

// printHistory writes the first page of each named environment's
// publication history, newest first.
func printHistory(ctx context.Context, w io.Writer, envs *env.Service, canvasID string, names ...string) error {
	for _, name := range names {
		page, err := envs.History(ctx, env.HistoryParams{CanvasID: canvasID, EnvName: name, Limit: env.DefaultLimit})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s history (%d):\n", name, page.Total)
		for _, pub := range page.Items {
			fmt.Fprintf(w, "  %-8s versionIndex=%d isActive=%t\n", pub.Title, pub.VersionIndex, pub.IsActive)
		}
	}
	return nil
}
