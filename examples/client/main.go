// Command client shows a program that takes its prompts from a Prompt
// Canvas server through the Go client: it starts a server on loopback (an
// engine on a temporary directory, as canvasd serves it), fetches the
// version production serves through client.Prompts, keeps it fresh while
// another goroutine publishes a new version, and keeps serving the last
// good version while the server is down, until it is back.
//
//	go run ./examples/client
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
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the walk-through and writes its report to w. The report holds
// no ids or times, so it is the same on every run.
func run(ctx context.Context, w io.Writer) error {
	dir, err := os.MkdirTemp("", "canvas-client-example")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv := &loopbackServer{dir: dir, addr: "127.0.0.1:0", token: uuid.NewString()}
	if err := srv.start(ctx); err != nil {
		return err
	}
	defer srv.stop()

	c, err := client.New(srv.url(), client.Options{Token: srv.token})
	if err != nil {
		return err
	}
	project, err := c.CreateProject(ctx, "support")
	if err != nil {
		return err
	}
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &project.ID})
	if err != nil {
		return err
	}
	var versions []*wire.Version
	for _, text := range []string{"Say hi to {{name}}.", "Say hello to {{name}}, warmly."} {
		v, err := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
			Message: &wire.MessageInput{Role: wire.RoleSystem, Content: text}})
		if err != nil {
			return err
		}
		versions = append(versions, v)
	}
	publish := func(v *wire.Version) error {
		_, err := c.Publish(ctx, client.PublishParams{CanvasID: cv.ID, EnvName: wire.Production, VersionID: v.ID})
		return err
	}
	if err := publish(versions[0]); err != nil {
		return err
	}

	// The program's prompt cache: every Get after the first is answered
	// locally, and the server's watch keeps it fresh.
	updates := make(chan struct{}, 1)
	prompts, err := c.NewPrompts(client.PromptsOptions{PollInterval: 100 * time.Millisecond,
		OnUpdate: func(string, string, *client.Prompt, error) {
			select {
			case updates <- struct{}{}:
			default:
			}
		}})
	if err != nil {
		return err
	}
	defer prompts.Close()
	report := func(label string) error {
		p, err := prompts.Get(ctx, cv.ID, wire.Production)
		if err != nil {
			return err
		}
		state := "fresh"
		if p.Stale {
			state = "stale"
		}
		fmt.Fprintf(w, "%s: %q (%s)\n", label, *p.Version.Content, state)
		return nil
	}
	// until waits for the cache to reach a state, woken by its updates.
	until := func(ok func(p *client.Prompt) bool) error {
		deadline := time.After(30 * time.Second)
		for {
			if p, err := prompts.Get(ctx, cv.ID, wire.Production); err == nil && ok(p) {
				return nil
			}
			select {
			case <-updates:
			case <-deadline:
				return errors.New("the prompt did not reach the expected state")
			}
		}
	}

	if err := report("first fetch"); err != nil {
		return err
	}

	published := make(chan error, 1)
	go func() { published <- publish(versions[1]) }() // someone else publishes
	if err := <-published; err != nil {
		return err
	}
	if err := until(func(p *client.Prompt) bool { return p.Version.ID == versions[1].ID }); err != nil {
		return err
	}
	if err := report("after the publish"); err != nil {
		return err
	}

	srv.stop()
	if err := until(func(p *client.Prompt) bool { return p.Stale }); err != nil {
		return err
	}
	if err := report("server down"); err != nil {
		return err
	}

	if err := srv.start(ctx); err != nil {
		return err
	}
	if err := until(func(p *client.Prompt) bool { return !p.Stale }); err != nil {
		return err
	}
	return report("server back")
}

// loopbackServer serves an engine's data directory on a loopback address,
// and can stop and start again on the same data and address.
type loopbackServer struct {
	dir, addr, token string
	eng              *engine.Engine
	http             *http.Server
	done             chan struct{}
}

func (s *loopbackServer) url() string { return "http://" + s.addr }

func (s *loopbackServer) start(ctx context.Context) error {
	eng, err := engine.OpenSQLite(ctx, s.dir, engine.Options{})
	if err != nil {
		return err
	}
	if _, _, err := eng.Bootstrap(ctx, s.token); err != nil {
		return errors.Join(err, eng.Close())
	}
	h, err := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(server.AuthOptions{Store: eng.Store, Changes: eng.Changes}),
		Watch: server.WatchOptions{Heartbeat: time.Second}})
	if err != nil {
		return errors.Join(err, eng.Close())
	}
	var ln net.Listener
	for range 50 { // a restart may find the old socket still closing
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return errors.Join(err, eng.Close())
	}
	s.addr, s.eng = ln.Addr().String(), eng
	s.http = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return nil
}

func (s *loopbackServer) stop() {
	if s.http == nil {
		return
	}
	_ = s.http.Close()
	<-s.done
	_ = s.eng.Close()
	s.http = nil
}
