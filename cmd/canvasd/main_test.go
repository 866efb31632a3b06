package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// waitLimit only keeps a broken test from hanging; nothing is asserted
// about how long anything takes.
const waitLimit = 20 * time.Second

// output is an io.Writer safe for concurrent use that wakes up whoever
// waits for a line.
type output struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func newOutput() *output { return &output{wrote: make(chan struct{}, 1)} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	select {
	case o.wrote <- struct{}{}:
	default:
	}
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// line returns the rest of the first line that starts with prefix.
func (o *output) line(prefix string) (string, bool) {
	sc := bufio.NewScanner(strings.NewReader(o.String()))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return rest, true
		}
	}
	return "", false
}

// getenv returns an environment made of vars alone.
func getenv(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

// parseServe reads the serve subcommand's configuration from the
// environment variables vars and the flags args.
func parseServe(vars map[string]string, args ...string) (config, error) {
	var c config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := c.serveFlags(fs, getenv(vars)); err != nil {
		return c, err
	}
	return c, fs.Parse(args)
}

// daemon is canvasd serving in-process.
type daemon struct {
	URL    string
	Data   string
	Stdout *output
	Stderr *output
	// finished is closed when run has returned err.
	finished chan struct{}
	err      error
	cancel   context.CancelFunc
}

// startDaemon runs canvasd with args and env, waits until it listens, and
// stops it at the end of the test.
func startDaemon(t *testing.T, args []string, vars map[string]string) *daemon {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemon{Stdout: newOutput(), Stderr: newOutput(), finished: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(d.finished)
		d.err = run(ctx, args, getenv(vars), d.Stdout, d.Stderr)
	}()
	t.Cleanup(func() { _ = d.stop() })

	timeout := time.After(waitLimit)
	for {
		if addr, ok := d.Stdout.line("listening on "); ok {
			d.URL = "http://" + addr
			return d
		}
		select {
		case <-d.Stdout.wrote:
		case <-d.finished:
			t.Fatalf("canvasd stopped before listening: %v\nstderr: %s", d.err, d.Stderr)
		case <-timeout:
			t.Fatalf("canvasd did not listen; stderr: %s", d.Stderr)
		}
	}
}

// stop cancels the daemon's context and returns what run returned.
func (d *daemon) stop() error {
	d.cancel()
	return d.result()
}

// result waits for run to return and returns its error.
func (d *daemon) result() error {
	<-d.finished
	return d.err
}

// get sends a GET with token as the bearer (none when empty) and returns
// the status.
func (d *daemon) get(t *testing.T, path, token string) int {
	t.Helper()
	req, err := http.NewRequest("GET", d.URL+path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// mustRun runs a canvasd command that must succeed and returns its stdout.
func mustRun(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, getenv(vars), &stdout, &stderr)
	require.NoError(t, err, "canvasd %s\nstderr: %s", strings.Join(args, " "), stderr.String())
	return stdout.String()
}

// openStore opens the daemon's database beside it, as another process would.
func openStore(t *testing.T, dir string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(dir, "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestRun_Usage(t *testing.T) {
	t.Parallel()
	t.Run("UnknownCommand", func(t *testing.T) {
		var stderr bytes.Buffer
		err := run(context.Background(), []string{"frobnicate"}, getenv(nil), io.Discard, &stderr)
		assert.ErrorIs(t, err, errUsage)
		assert.Contains(t, stderr.String(), "Usage:")
	})
	t.Run("UnknownFlag", func(t *testing.T) {
		for _, args := range [][]string{{"--nope"}, {"serve", "--nope"}, {"keys", "create", "--nope"}, {"export", "--data"}} {
			var stderr bytes.Buffer
			err := run(context.Background(), args, getenv(nil), io.Discard, &stderr)
			assert.ErrorIs(t, err, errUsage)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			assert.Len(t, lines, 1, "one line, not the usage: %q", stderr.String())
			assert.Contains(t, lines[0], "--help")
			assert.Contains(t, lines[0], strings.TrimPrefix(args[len(args)-1], "-"))
		}
	})
	t.Run("KeysWithoutCommand", func(t *testing.T) {
		err := run(context.Background(), []string{"keys"}, getenv(nil), io.Discard, io.Discard)
		assert.ErrorIs(t, err, errUsage)
	})
}

func TestParseArgs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		pos  []string
		data string
	}{
		{"FlagFirst", []string{"--data", "d", "id"}, []string{"id"}, "d"},
		{"FlagLast", []string{"id", "--data=d"}, []string{"id"}, "d"},
		{"Between", []string{"a", "--data", "d", "b"}, []string{"a", "b"}, "d"},
		{"Terminator", []string{"a", "--", "--data"}, []string{"a", "--data"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			data := fs.String("data", "", "")
			pos, err := parseArgs(fs, tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.pos, pos)
			assert.Equal(t, tc.data, *data)
		})
	}
}

func TestRun_BadConfig(t *testing.T) {
	t.Parallel()
	for name, vars := range map[string]map[string]string{
		"BootstrapKeyNotUUID":  {"CANVAS_BOOTSTRAP_API_KEY": "not-a-uuid"},
		"MissingJWKSFile":      {"CANVAS_JWKS_FILE": "/nonexistent/jwks.json"},
		"PrivateNetworksValue": {"CANVAS_ALLOW_PRIVATE_NETWORKS": "maybe"},
		"BaseURL":              {"CANVAS_BASE_URL": "ftp://example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			vars["CANVAS_DATA"] = t.TempDir()
			vars["CANVAS_ADDR"] = "127.0.0.1:0"
			err := run(context.Background(), nil, getenv(vars), io.Discard, io.Discard)
			assert.Error(t, err)
			assert.NotErrorIs(t, err, errUsage)
		})
	}
}

// keyID returns the id of the API key with that token.
func keyID(t *testing.T, db *sqlite.DB, token string) string {
	t.Helper()
	key, err := db.GetAPIKeyByHash(context.Background(), canvas.HashToken(token))
	require.NoError(t, err)
	return key.ID
}
