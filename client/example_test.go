package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
)

// Example runs a canvas and keeps the version production serves in a
// Prompts cache. It needs a server at the address (canvasd serve).
func Example() {
	ctx := context.Background()
	c, err := client.New("http://127.0.0.1:8080", client.Options{Token: "an API key"})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Complete(ctx, wire.CompletionRequest{CanvasID: "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f",
		Variables: map[string]any{"name": "Ada"}})
	switch {
	case client.ErrorCode(err) == wire.CodeNotFound:
		log.Fatal("no such canvas, or nothing published")
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(res.Choices[0].Message.Content.Text)

	prompts, err := c.NewPrompts(client.PromptsOptions{SnapshotDir: "prompts"})
	if err != nil {
		log.Fatal(err)
	}
	defer prompts.Close()
	p, err := prompts.Get(ctx, "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f", wire.Production)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(*p.Version.Content, p.Stale)
}
