// Command stream runs a canvas in-process against the offline echo model
// and prints the streamed chunks as they arrive: it opens a SQLite store in
// a temporary directory, bootstraps the default workspace, creates a canvas
// whose prompt has a {{topic}} variable, promotes a version, and runs it
// with the completion service in stream mode, then reads back the recorded
// run.
//
//	go run ./examples/stream
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
	"github.com/promptcanvas/promptcanvas/model"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the walk-through and writes its report to w. The report holds
// no ids or times, so it is the same on every run.
func run(ctx context.Context, w io.Writer) error {
	// With no providers configured, the engine serves the echo model: it
	// answers with the rendered messages, word by word.
	d, ctx, err := demo.Open(ctx, "stream", canvas.RoleAdmin, engine.Options{})
	if err != nil {
		return err
	}
	defer d.Close()
	canvases, envs, completions := d.Canvases, d.Environments, d.Completions

	project, err := canvases.CreateProject(ctx, canvas.CreateProjectParams{Name: "Docs"})
	if err != nil {
		return err
	}
	c, err := canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Explainer", ProjectID: &project.ID})
	if err != nil {
		return err
	}
	v, err := canvases.CreateVersion(ctx, canvas.CreateVersionParams{
		PromptID:      c.ID,
		Configuration: &canvas.Configuration{Model: model.EchoModel},
		Variables:     []canvas.Variable{{Name: "topic", Type: canvas.VariableText, Required: true}},
		Message:       &canvas.MessageInput{Role: canvas.RoleSystem, Content: "Explain {{ topic }} in one line."},
	})
	if err != nil {
		return err
	}
	if _, _, err := envs.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID}); err != nil {
		return err
	}

	// Without a version or environment the promoted version runs. The
	// request's messages follow the version's as user messages.
	n := 0
	result, err := completions.Run(ctx, completion.RunParams{
		CanvasID:  c.ID,
		Variables: map[string]any{"topic": "group commit"},
		Messages:  []string{"Keep it short."},
		Stream: func(ch model.Chunk) error {
			n++
			_, err := fmt.Fprintf(w, "chunk %d: %q\n", n, ch.Text)
			return err
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "status: %s, model: %s, tokens in/out: %d/%d\n",
		result.Status, result.Model, result.Usage.InputTokens, result.Usage.OutputTokens)

	recorded, err := completions.GetRun(ctx, result.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "recorded: %s\n%s\n", recorded.Status, recorded.Result.Choices[0].Message.Content.Text)
	return nil
}
