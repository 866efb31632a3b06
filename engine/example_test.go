package engine_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
)

// Example embeds Prompt Canvas in-process: one call opens the whole system
// on a data directory, a published version runs synchronously and then
// asynchronously (executed by the engine's background work), and each
// result is printed.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "canvas-engine-example")
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
	go e.Run(ctx) // background work until Close

	// A new database gets the default workspace; the caller of the
	// services is a Principal in the context.
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

	c, err := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Variables: []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
		Message:   &canvas.MessageInput{Role: canvas.RoleSystem, Content: "Say hi to {{name}}."}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, _, err := e.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production,
		VersionID: v.ID}); err != nil {
		fmt.Println(err)
		return
	}

	// Synchronously: the run is answered at once.
	sync, err := e.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, Variables: map[string]any{"name": "Ada"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("sync:", sync.Status, sync.Result.Choices[0].Message.Content.Text)

	// Asynchronously: the run is accepted queued, and the background work
	// completes it.
	async, err := e.Completions.Run(ctx, completion.RunParams{CanvasID: c.ID, Async: true,
		Variables: map[string]any{"name": "Grace"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("async accepted:", async.Status)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if r, err := e.Completions.GetRun(ctx, async.ID); err == nil && r.Terminal() {
			fmt.Println("async:", r.Status, r.Result.Choices[0].Message.Content.Text)
			break
		}
	}
	// Output:
	// sync: completed Say hi to Ada.
	// async accepted: queued
	// async: completed Say hi to Grace.
}
