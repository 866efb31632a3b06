package completion_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// Example_service runs a canvas' promoted version in-process with the
// completion service, then asks for a version that does not render.
func Example_service() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "completion-example")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "canvas.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	ws := &canvas.Workspace{Name: "example"}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		fmt.Println(err)
		return
	}
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleEditor})

	canvases, envs := canvas.NewService(canvas.Options{Store: db}), env.NewService(env.Options{Store: db, Canvases: db, Changes: db})
	svc := completion.NewService(completion.Options{Store: db, Canvases: db, Environments: envs,
		Models: model.NewCaller(model.Options{})})

	c, _ := canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"})
	v, _ := canvases.CreateVersion(ctx, canvas.CreateVersionParams{PromptID: c.ID,
		Variables: []canvas.Variable{{Name: "name", Type: canvas.VariableText, Required: true}},
		Message:   &canvas.MessageInput{Content: "Say hi to {{name}}."}})
	if _, _, err := envs.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID}); err != nil {
		fmt.Println(err)
		return
	}

	run, err := svc.Run(ctx, completion.RunParams{CanvasID: c.ID, Variables: map[string]any{"name": "Ada"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(run.Status, run.Model, run.Result.Choices[0].Message.Content.Text)

	_, err = svc.Run(ctx, completion.RunParams{CanvasID: c.ID})
	fmt.Println(canvas.ErrorCode(err), canvas.ErrorDetails(err))
	// Output:
	// completed echo Say hi to Ada.
	// VALIDATION [{/json/variables/name required variable has no value}]
}
