// Command readme runs the Go snippets of the README, which are quoted from
// this package's files (between "// README: NAME" and "// README: end"
// lines), so that each of them compiles and runs as the README shows it;
// docs/api.md quotes the call of the OpenAI-compatible entry point alike.
// It embeds the engine in-process (embed), serves it on loopback and calls
// it with the Go client (callServer), and serves its prompts from the
// client's cache (servePrompts), and runs a canvas through the official
// OpenAI client (callOpenAI).
//
//	go run ./examples/readme
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/server"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run runs the three snippets on a temporary directory and writes what
// they did to w.
func run(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "canvas-readme-example")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	if err := embed(ctx, filepath.Join(dir, "embedded")); err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	fmt.Fprintln(w, "embedded: published")

	e, err := engine.OpenSQLite(ctx, filepath.Join(dir, "served"), engine.Options{})
	if err != nil {
		return err
	}
	defer e.Close()
	apiKey := uuid.NewString()
	if _, _, err := e.Bootstrap(ctx, apiKey); err != nil {
		return err
	}
	h, err := server.New(server.Options{Engine: e, Auth: server.NewAuthenticator(server.AuthOptions{Store: e.Store, Changes: e.Changes})})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	baseURL := "http://" + ln.Addr().String()

	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	if err != nil {
		return err
	}
	admin := canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	project, err := e.Canvases.CreateProject(admin, canvas.CreateProjectParams{Name: "support"})
	if err != nil {
		return err
	}
	cv, err := e.Canvases.CreateCanvas(admin, canvas.CreateCanvasParams{Title: "Greeter", ProjectID: &project.ID})
	if err != nil {
		return err
	}

	if err := callServer(ctx, baseURL, apiKey, cv.ID); err != nil {
		return fmt.Errorf("call the server: %w", err)
	}
	fmt.Fprintln(w, "client: completed")

	if err := callOpenAI(ctx, baseURL, apiKey, cv.ID); err != nil {
		return fmt.Errorf("call the OpenAI entry point: %w", err)
	}
	fmt.Fprintln(w, "openai: completed")

	// An empty snapshot: the server answers from the start.
	snapshot := filepath.Join(dir, "prompts")
	if err := os.Mkdir(snapshot, 0o700); err != nil {
		return err
	}
	c, err := client.New(baseURL, client.Options{Token: apiKey})
	if err != nil {
		return err
	}
	if err := servePrompts(ctx, c, snapshot, cv.ID); err != nil {
		return fmt.Errorf("serve prompts: %w", err)
	}
	fmt.Fprintln(w, "prompts: served")
	return nil
}

// embed is the README's "Embedding in Go": an engine on dataDir, a
// canvas, a version and its publication to production.
func embed(ctx context.Context, dataDir string) error {
	// README: embed
	e, err := engine.OpenSQLite(ctx, dataDir, engine.Options{}) // created when missing
	if err != nil {
		return err
	}
	defer e.Close()
	go e.Run(ctx) // async completions, generations, workflow runs, webhook deliveries, purges

	// On a new database: the default workspace and its first admin API key.
	if _, _, err := e.Bootstrap(ctx, ""); err != nil {
		return err
	}
	ws, err := e.Store.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
	if err != nil {
		return err
	}

	// Every call acts as the Principal in its context.
	ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: ws.ID, UserID: "ada", Role: canvas.RoleAdmin})
	c, err := e.Canvases.CreateCanvas(ctx, canvas.CreateCanvasParams{Title: "Greeter"}) // ada's personal draft
	if err != nil {
		return err
	}
	v, err := e.Canvases.CreateVersion(ctx, canvas.CreateVersionParams{
		PromptID: c.ID,
		Message:  &canvas.MessageInput{Role: canvas.RoleSystem, Content: "Say hi to {{name}}."},
	})
	if err != nil {
		return err
	}
	pub, _, err := e.Environments.Publish(ctx, env.PublishVersionParams{CanvasID: c.ID, EnvName: env.Production, VersionID: v.ID})
	if err != nil {
		return err
	}
	fmt.Println("published", pub.VersionID, "to", pub.EnvironmentName)
	// README: end
	if pub.VersionID != v.ID {
		return errors.New("production does not serve the new version")
	}
	return nil
}
