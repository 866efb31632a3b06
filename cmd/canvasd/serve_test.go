package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun_Serve(t *testing.T) {
	t.Parallel()

	t.Run("Bootstrap", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "data")
		key := uuid.NewString()
		args := []string{"serve", "--addr", "127.0.0.1:0", "--data", dir}
		d := startDaemon(t, args, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})

		printed, ok := d.Stdout.line("admin API key: ")
		require.True(t, ok, "stdout: %s", d.Stdout)
		assert.Equal(t, key, printed)
		next, ok := d.Stdout.line("next: ")
		require.True(t, ok, "the next step follows the key: %s", d.Stdout)
		assert.Equal(t, "export CANVAS_KEY="+key, next)
		open, ok := d.Stdout.line("      then open ")
		require.True(t, ok, "stdout: %s", d.Stdout)
		assert.True(t, strings.HasPrefix(open, d.URL+"/console "), "the console's address: %q", open)
		assert.Equal(t, http.StatusOK, d.get(t, "/healthz", ""))
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
		assert.Equal(t, http.StatusUnauthorized, d.get(t, "/projects", ""))

		for _, line := range strings.Split(strings.TrimSpace(d.Stderr.String()), "\n") {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &rec), "log lines are JSON: %s", line)
		}
		assert.NotContains(t, d.Stderr.String(), key, "the admin key never reaches the log")

		info, err := os.Stat(dir)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())
		require.NoError(t, d.stop())

		// A second start on the same data bootstraps nothing.
		d = startDaemon(t, args, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": uuid.NewString()})
		_, ok = d.Stdout.line("admin API key: ")
		assert.False(t, ok, "stdout: %s", d.Stdout)
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
		assert.NoError(t, d.stop())
	})

	t.Run("RandomKey", func(t *testing.T) {
		t.Parallel()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, nil)
		key, ok := d.Stdout.line("admin API key: ")
		require.True(t, ok, "stdout: %s", d.Stdout)
		assert.True(t, canvas.IsAPIKeyToken(key), "key %q is a UUID", key)
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
	})

	t.Run("EnvFallback", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		d := startDaemon(t, nil, map[string]string{"CANVAS_ADDR": "127.0.0.1:0", "CANVAS_DATA": dir})
		assert.Equal(t, http.StatusOK, d.get(t, "/healthz", ""))
		assert.FileExists(t, filepath.Join(dir, "canvas.db"))
	})

	t.Run("FlagBeatsEnv", func(t *testing.T) {
		t.Parallel()
		envDir := filepath.Join(t.TempDir(), "env")
		flagDir := filepath.Join(t.TempDir(), "flag")
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", flagDir}, map[string]string{
			"CANVAS_ADDR": "unusable.invalid:1",
			"CANVAS_DATA": envDir,
		})
		assert.Equal(t, http.StatusOK, d.get(t, "/healthz", ""))
		assert.FileExists(t, filepath.Join(flagDir, "canvas.db"))
		assert.NoDirExists(t, envDir)
	})

	t.Run("JWT", func(t *testing.T) {
		t.Parallel()
		secret := "an-hs256-secret-for-the-test-of-canvasd"
		ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		raw, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &ecKey.PublicKey, KeyID: "ec-1"}}})
		require.NoError(t, err)
		jwks := filepath.Join(t.TempDir(), "jwks.json")
		require.NoError(t, os.WriteFile(jwks, raw, 0o600))

		dir := t.TempDir()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, map[string]string{
			"CANVAS_JWT_SECRET": secret,
			"CANVAS_JWKS_FILE":  jwks,
		})
		ws, err := openStore(t, dir).GetWorkspaceByName(context.Background(), canvas.DefaultWorkspaceName)
		require.NoError(t, err)
		claims := jwt.MapClaims{
			"sub": "user-1", "workspace_id": ws.ID, "role": "viewer",
			"exp": time.Now().Add(time.Hour).Unix(),
		}
		hs, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(secret))
		require.NoError(t, err)
		es := jwt.NewWithClaims(jwt.SigningMethodES256, claims)
		es.Header["kid"] = "ec-1"
		esToken, err := es.SignedString(ecKey)
		require.NoError(t, err)

		assert.Equal(t, http.StatusOK, d.get(t, "/projects", hs))
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", esToken))
		assert.Equal(t, http.StatusUnauthorized, d.get(t, "/projects", hs[:len(hs)-2]))
	})

	t.Run("GracefulShutdown", func(t *testing.T) {
		t.Parallel()
		key := uuid.NewString()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
			map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
		addr := strings.TrimPrefix(d.URL, "http://")

		// A request is in flight: its handler waits for the body, as the
		// server's "100 Continue" shows.
		conn, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		defer conn.Close()
		body := `{"name": "made during shutdown"}`
		_, err = fmt.Fprintf(conn, "POST /projects HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", addr, key, len(body))
		require.NoError(t, err)
		replies := bufio.NewReader(conn)
		resp, err := http.ReadResponse(replies, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusContinue, resp.StatusCode)

		d.cancel()
		// The listener closes: new connections are refused.
		deadline := time.Now().Add(waitLimit)
		for {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				break
			}
			c.Close()
			require.True(t, time.Now().Before(deadline), "the server kept accepting connections")
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case <-d.finished:
			t.Fatalf("run returned with a request in flight: %v", d.err)
		default:
		}

		// The in-flight request completes, then run returns nil.
		_, err = conn.Write([]byte(body))
		require.NoError(t, err)
		resp, err = http.ReadResponse(replies, nil)
		require.NoError(t, err, "stderr: %s", d.Stderr)
		resp.Body.Close()
		assert.Equal(t, http.StatusCreated, resp.StatusCode)
		assert.NoError(t, d.result())
		assert.Contains(t, d.Stderr.String(), `"msg":"stopped"`)
	})
}

// TestRun_FirstStart covers the first hour of an operator: the admin key
// is printed once the server can serve, a start that fails leaves the next
// one able to bootstrap, and every later start says how to make an admin
// key, for whoever never saw the first one.
func TestRun_FirstStart(t *testing.T) {
	t.Parallel()

	// createAdminKey runs the command a start printed after prefix, as an
	// operator would paste it, and returns the new key.
	createAdminKey := func(t *testing.T, d *daemon, prefix string) string {
		t.Helper()
		line, ok := d.Stdout.line(prefix)
		require.True(t, ok, "stdout: %s", d.Stdout)
		args, ok := strings.CutPrefix(line, "canvasd ")
		require.True(t, ok, "the line ends with a canvasd command: %s", line)
		out := mustRun(t, nil, strings.Fields(args)...)
		key := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
		require.True(t, canvas.IsAPIKeyToken(key), "keys create printed %q", out)
		return key
	}

	t.Run("AddressInUse", func(t *testing.T) {
		t.Parallel()
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer busy.Close()
		dir := filepath.Join(t.TempDir(), "data")
		key := uuid.NewString()
		vars := map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key}

		stdout, stderr := newOutput(), newOutput()
		err = run(context.Background(), []string{"--addr", busy.Addr().String(), "--data", dir}, getenv(vars), stdout, stderr)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "address already in use")
		assert.NotContains(t, stdout.String(), "admin API key", "no key is printed by a start that cannot serve")

		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, vars)
		printed, ok := d.Stdout.line("admin API key: ")
		require.True(t, ok, "the next start bootstraps; stdout: %s", d.Stdout)
		assert.Equal(t, key, printed)
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
	})

	t.Run("SideListenerInUse", func(t *testing.T) {
		// The metrics listener fails after the main one is bound: the
		// database is left without a workspace, and no key is printed.
		t.Parallel()
		busy, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer busy.Close()
		dir := t.TempDir()
		stdout := newOutput()
		err = run(context.Background(), []string{"--addr", "127.0.0.1:0", "--data", dir, "--metrics-addr", busy.Addr().String()},
			getenv(nil), stdout, io.Discard)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "metrics listener")
		assert.NotContains(t, stdout.String(), "admin API key")

		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, nil)
		key, ok := d.Stdout.line("admin API key: ")
		require.True(t, ok, "the next start bootstraps; stdout: %s", d.Stdout)
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
	})

	t.Run("KeyNeverSeen", func(t *testing.T) {
		// The first start printed a key nobody kept: the next start says
		// how to create another, and that command works while it runs.
		t.Parallel()
		dir := t.TempDir()
		args := []string{"--addr", "127.0.0.1:0", "--data", dir}
		d := startDaemon(t, args, nil)
		_, ok := d.Stdout.line("admin API key: ")
		require.True(t, ok)
		require.NoError(t, d.stop())

		d = startDaemon(t, args, nil)
		_, ok = d.Stdout.line("admin API key: ")
		assert.False(t, ok, "a key is printed once only")
		line, _ := d.Stdout.line("existing database; to create an admin API key: ")
		assert.Equal(t, "canvasd keys create --workspace default --role admin --data "+dir, line)
		line, _ = d.Stdout.line("  or, from a source checkout: ")
		assert.Equal(t, "go run ./cmd/canvasd keys create --workspace default --role admin --data "+dir, line)
		key := createAdminKey(t, d, "existing database; to create an admin API key: ")
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
		assert.NotContains(t, d.Stderr.String(), "no active admin API key")
	})

	t.Run("InterruptedBootstrap", func(t *testing.T) {
		// A start stopped between the workspace and its key leaves a
		// database with no admin key: the next start warns and says how to
		// make one.
		t.Parallel()
		dir := t.TempDir()
		db, err := dataDir(dir)
		require.NoError(t, err)
		store, err := sqlite.Open(context.Background(), db)
		require.NoError(t, err)
		require.NoError(t, store.CreateWorkspace(context.Background(), &canvas.Workspace{Name: canvas.DefaultWorkspaceName}))
		require.NoError(t, store.Close())

		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, nil)
		_, ok := d.Stdout.line("admin API key: ")
		assert.False(t, ok)
		assert.Contains(t, d.Stderr.String(), `"level":"WARN","msg":"no active admin API key in the database; create one with: canvasd keys create --workspace default --role admin --data `+dir)
		key := createAdminKey(t, d, "no admin API key: create one with: ")
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
	})

	t.Run("BootstrapKeyIgnored", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		args := []string{"--addr", "127.0.0.1:0", "--data", dir}
		key := uuid.NewString()
		d := startDaemon(t, args, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
		assert.NotContains(t, d.Stderr.String(), "ignored")
		require.NoError(t, d.stop())

		for given, state := range map[string]string{
			key:              "it is a key of this database",
			uuid.NewString(): "it is not a key of this database",
		} {
			d = startDaemon(t, args, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": given})
			assert.Contains(t, d.Stderr.String(), `"level":"WARN","msg":"CANVAS_BOOTSTRAP_API_KEY is ignored: the database already exists, and only a new one is given a first admin key; `+state+`"`)
			assert.NotContains(t, d.Stderr.String(), given, "the key never reaches the log")
			require.NoError(t, d.stop())
		}
	})

	t.Run("ConsoleURL", func(t *testing.T) {
		t.Parallel()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, nil)
		console, ok := d.Stdout.line("console: ")
		require.True(t, ok, "stdout: %s", d.Stdout)
		assert.Equal(t, d.URL+"/console", console)
		resp, err := http.Get(console)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	})
}
