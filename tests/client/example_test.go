package clienttest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
)

// Example publishes a version through the client and reads it back through
// Prompts, the cache a program keeps its prompts in. The server is an
// engine on a temporary directory, as canvasd would serve it.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "client-example")
	defer os.RemoveAll(dir)
	eng, err := engine.OpenSQLite(ctx, dir, engine.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()
	token := uuid.NewString()
	if _, _, err := eng.Bootstrap(ctx, token); err != nil {
		fmt.Println(err)
		return
	}
	h, _ := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(server.AuthOptions{Store: eng.Store, Changes: eng.Changes})})
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := client.New(srv.URL, client.Options{Token: token})
	if err != nil {
		fmt.Println(err)
		return
	}
	project, _ := c.CreateProject(ctx, "support")
	cv, _ := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &project.ID})
	v, _ := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
		Message: &wire.MessageInput{Role: wire.RoleSystem, Content: "Say hi to {{name}}."}})
	if _, err := c.Publish(ctx, client.PublishParams{CanvasID: cv.ID, EnvName: "production", VersionID: v.ID}); err != nil {
		fmt.Println(err)
		return
	}

	prompts, err := c.NewPrompts(client.PromptsOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer prompts.Close()
	p, err := prompts.Get(ctx, cv.ID, "production")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(*p.Version.Content, p.Stale)

	_, err = c.GetCanvas(ctx, uuid.NewString())
	fmt.Println(client.ErrorCode(err))
	// Output:
	// Say hi to {{name}}. false
	// NOT_FOUND
}
