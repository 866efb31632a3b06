package main

import (
	"context"
	"fmt"
	"log"
)

// README: client
import (
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// README: end

// callServer is the README's "Calling the server from Go": a version of
// canvasID, published, and run, through the Go client.
func callServer(ctx context.Context, baseURL, apiKey, canvasID string) error {
	// README: client
	c, err := client.New(baseURL, client.Options{Token: apiKey})
	if err != nil {
		return err
	}
	v, err := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: canvasID,
		Message: &wire.MessageInput{Role: wire.RoleSystem, Content: "Say hi to {{name}}."}})
	if err != nil {
		return err
	}
	_, err = c.Publish(ctx, client.PublishParams{CanvasID: canvasID, EnvName: wire.Production, VersionID: v.ID},
		client.WithIdempotencyKey("publish-"+v.ID))
	if client.ErrorCode(err) == wire.CodeNotFound {
		return fmt.Errorf("no such canvas: %w", err)
	} else if err != nil {
		return err
	}
	res, err := c.Complete(ctx, wire.CompletionRequest{CanvasID: canvasID, Variables: map[string]any{"name": "Ada"}})
	if err != nil {
		return err
	}
	fmt.Println(res.Choices[0].Message.Content.Text)
	// README: end
	return nil
}

// servePrompts is the README's client.Prompts: the prompt production
// serves for canvasID, from the client's cache, with snapshotDir (a
// directory canvasd export wrote) standing in until the server answers.
func servePrompts(ctx context.Context, c *client.Client, snapshotDir, canvasID string) error {
	// README: prompts
	prompts, err := c.NewPrompts(client.PromptsOptions{SnapshotDir: snapshotDir})
	if err != nil {
		return err
	}
	defer prompts.Close()
	p, err := prompts.Get(ctx, canvasID, "production")
	if err != nil {
		return err // the server said there is nothing to serve, or it was never reachable
	}
	if p.Stale {
		log.Printf("serving the last good version: %v", p.Err)
	}
	if m := p.Version.Prompt(); m != nil {
		fmt.Println(m.Content) // the version's system message
	}
	// README: end
	return nil
}
