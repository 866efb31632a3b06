// Command claude runs a canvas on Claude through a Prompt Canvas server:
// it stores the workspace's Anthropic key as a credential (sealed by the
// server, never shown again), makes a canvas whose version names a Claude
// model, and runs it, printing the answer and what it cost.
//
//	CANVAS_URL=http://127.0.0.1:8080 CANVAS_KEY=... ANTHROPIC_API_KEY=sk-ant-... go run ./examples/claude
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

func main() {
	cfg := config{URL: os.Getenv("CANVAS_URL"), Key: os.Getenv("CANVAS_KEY"),
		AnthropicKey: os.Getenv("ANTHROPIC_API_KEY"), AnthropicURL: os.Getenv("ANTHROPIC_BASE_URL")}
	if cfg.URL == "" {
		cfg.URL = "http://127.0.0.1:8080"
	}
	if cfg.Key == "" || cfg.AnthropicKey == "" {
		log.Fatal("set CANVAS_KEY (an admin key of the server) and ANTHROPIC_API_KEY")
	}
	if err := run(context.Background(), os.Stdout, cfg); err != nil {
		log.Fatal(err)
	}
}

// config is where the server is, the key to it, and the Anthropic key
// (and, for a proxy or a test, Anthropic's address).
type config struct {
	URL, Key                   string
	AnthropicKey, AnthropicURL string
}

// run stores the key, makes the canvas and runs it once.
func run(ctx context.Context, w io.Writer, cfg config) error {
	c, err := client.New(cfg.URL, client.Options{Token: cfg.Key})
	if err != nil {
		return err
	}
	// The key is sealed at rest; answers show only its last four
	// characters (keyHint).
	// README: claude
	params := wire.CreateCredentialParams{Name: "claude", Provider: wire.ProviderAnthropic, APIKey: &cfg.AnthropicKey}
	if cfg.AnthropicURL != "" {
		params.BaseURL = &cfg.AnthropicURL
	}
	cred, err := c.CreateCredential(ctx, params)
	// README: end
	if client.ErrorCode(err) == wire.CodeConflict {
		return errors.New(`the workspace already has a credential named "claude"`)
	} else if err != nil {
		return err
	}
	fmt.Fprintf(w, "credential %s (%s, key %s)\n", cred.Name, cred.Provider, *cred.KeyHint)

	project, err := c.CreateProject(ctx, "claude-example")
	if err != nil {
		return err
	}
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter on Claude", ProjectID: &project.ID})
	if err != nil {
		return err
	}
	// A claude- model runs on the workspace's anthropic credential; the
	// version may also name one with configuration.credentialId.
	// README: claude
	v, err := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
		Configuration: &wire.Configuration{Model: "claude-sonnet-4-5"},
		Message:       &wire.MessageInput{Role: wire.RoleUser, Content: "Say hi to {{name}} in five words."}})
	// README: end
	if err != nil {
		return err
	}
	if _, err := c.Publish(ctx, client.PublishParams{CanvasID: cv.ID, EnvName: wire.Production, VersionID: v.ID}); err != nil {
		return err
	}
	// README: claude
	res, err := c.Complete(ctx, wire.CompletionRequest{CanvasID: cv.ID, Variables: map[string]any{"name": "Ada"}})
	// README: end
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%s: %s\n", res.Model, res.Choices[0].Message.Content.Text)
	if res.Cost != nil {
		fmt.Fprintf(w, "cost: $%.6f (%d tokens in, %d out)\n", res.Cost.Total, res.Usage.InputTokens, res.Usage.OutputTokens)
	}
	return nil
}
