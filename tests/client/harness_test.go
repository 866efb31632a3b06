// Package clienttest tests the Go client (module client) against a real
// server: an engine on SQLite served over loopback, as canvasd serves it.
package clienttest

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/stretchr/testify/require"
)

// testServer is canvasd in miniature: an engine on a SQLite data directory
// served over loopback, which a test can stop and start again on the same
// data and the same address.
type testServer struct {
	t     testing.TB
	dir   string
	addr  string
	token string
	URL   string

	eng  *engine.Engine
	srv  *http.Server
	done chan struct{}
}

// startServer opens a new data directory and serves it on a free port.
func startServer(t testing.TB) *testServer {
	t.Helper()
	ts := &testServer{t: t, dir: t.TempDir(), addr: "127.0.0.1:0", token: uuid.NewString()}
	ts.Start()
	t.Cleanup(ts.Stop)
	return ts
}

// Start serves the data directory on ts.addr (the first start picks a free
// port, later starts take the same one again).
func (ts *testServer) Start() {
	t := ts.t
	t.Helper()
	ctx := context.Background()
	eng, err := engine.OpenSQLite(ctx, ts.dir, engine.Options{})
	require.NoError(t, err)
	_, _, err = eng.Bootstrap(ctx, ts.token)
	require.NoError(t, err)
	h, err := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(server.AuthOptions{Store: eng.Store, Changes: eng.Changes}),
		Watch: server.WatchOptions{PollInterval: 20 * time.Millisecond, Heartbeat: 200 * time.Millisecond}})
	require.NoError(t, err)
	var ln net.Listener
	for i := 0; ; i++ {
		ln, err = net.Listen("tcp", ts.addr)
		if err == nil || i == 50 {
			break
		}
		time.Sleep(20 * time.Millisecond) // the old socket is still closing
	}
	require.NoError(t, err)
	ts.addr = ln.Addr().String()
	ts.URL = "http://" + ts.addr
	ts.eng = eng
	ts.srv = &http.Server{Handler: h}
	ts.done = make(chan struct{})
	runCtx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(ts.done)
		go func() { _ = eng.Run(runCtx) }()
		_ = ts.srv.Serve(ln)
		cancel()
	}()
}

// Stop closes every connection, the listener and the engine.
func (ts *testServer) Stop() {
	if ts.srv == nil {
		return
	}
	_ = ts.srv.Close()
	<-ts.done
	require.NoError(ts.t, ts.eng.Close())
	ts.srv = nil
}

// Client returns a client of the server with the admin token.
func (ts *testServer) Client(t testing.TB) *client.Client {
	t.Helper()
	c, err := client.New(ts.URL, client.Options{Token: ts.token, MinBackoff: 10 * time.Millisecond,
		MaxBackoff: 50 * time.Millisecond})
	require.NoError(t, err)
	return c
}

// fixture is a canvas with versions, created through the client.
type fixture struct {
	Canvas   *wire.Canvas
	Versions []*wire.Version
}

// mustFixture creates a project, a canvas and n echo versions ("Prompt i").
func mustFixture(t testing.TB, c *client.Client, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	p, err := c.CreateProject(ctx, "p-"+uuid.NewString()[:8])
	require.NoError(t, err)
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &p.ID})
	require.NoError(t, err)
	f := &fixture{Canvas: cv}
	for i := 1; i <= n; i++ {
		v, err := c.CreateVersion(ctx, wire.CreateVersionParams{PromptID: cv.ID,
			Configuration: &wire.Configuration{Model: "echo", Type: "chat"},
			Variables:     []wire.Variable{{Name: "name", Type: wire.VariableText}},
			Message:       &wire.MessageInput{Role: wire.RoleSystem, Content: "Prompt " + string(rune('0'+i)) + " for {{name}}"}})
		require.NoError(t, err)
		f.Versions = append(f.Versions, v)
	}
	return f
}

// publish publishes version i (1-based) to envName.
func (f *fixture) publish(t testing.TB, c *client.Client, envName string, i int) *wire.Publication {
	t.Helper()
	pub, err := c.Publish(context.Background(), client.PublishParams{CanvasID: f.Canvas.ID, EnvName: envName,
		VersionID: f.Versions[i-1].ID})
	require.NoError(t, err)
	return pub
}
