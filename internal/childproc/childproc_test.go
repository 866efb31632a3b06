package childproc_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/internal/childproc"
)

// buildListener builds testdata/listener into a temporary directory.
func buildListener(t *testing.T) string {
	t.Helper()
	bin, err := childproc.Build(t.Context(), t.TempDir(), "./testdata/listener")
	require.NoError(t, err)
	return bin
}

// get returns the body url answers with.
func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

func TestStart(t *testing.T) {
	bin := buildListener(t)

	t.Run("Kill", func(t *testing.T) {
		t.Parallel()
		p, err := childproc.Start(t.Context(), childproc.Options{Path: bin, Env: []string{"LISTENER_GREETING=hello"}})
		require.NoError(t, err)
		t.Cleanup(p.Kill)
		assert.Equal(t, "listener", p.Name)
		assert.Regexp(t, `^127\.0\.0\.1:\d+$`, p.Addr)
		assert.Equal(t, "http://"+p.Addr, p.URL)
		assert.Positive(t, p.PID())
		body, err := get(p.URL)
		require.NoError(t, err)
		assert.Equal(t, "ok", body)
		assert.Contains(t, p.Stderr(), "listener: hello", "the environment reached the child and its stderr is kept")

		p.Kill()
		var exit *exec.ExitError
		require.ErrorAs(t, p.Wait(), &exit)
		assert.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal())
		_, err = get(p.URL)
		assert.Error(t, err, "nothing listens once the child is killed")
		p.Kill() // a second kill returns at once
	})

	t.Run("Stop", func(t *testing.T) {
		t.Parallel()
		p, err := childproc.Start(t.Context(), childproc.Options{Path: bin})
		require.NoError(t, err)
		t.Cleanup(p.Kill)
		p.Stop()
		assert.NoError(t, p.Wait(), "the child stopped cleanly on SIGTERM")
		p.Stop()
	})

	t.Run("Signal", func(t *testing.T) {
		t.Parallel()
		p, err := childproc.Start(t.Context(), childproc.Options{Path: bin})
		require.NoError(t, err)
		t.Cleanup(p.Kill)
		require.NoError(t, p.Signal(syscall.SIGTERM))
		assert.NoError(t, p.Wait())
	})

	t.Run("ExitedBeforeListening", func(t *testing.T) {
		t.Parallel()
		_, err := childproc.Start(t.Context(), childproc.Options{Name: "early", Path: bin, Args: []string{"-exit", "3"}})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "early exited before listening")
		assert.Contains(t, err.Error(), "exit status 3")
		assert.Contains(t, err.Error(), "listener: exiting early", "the error holds the child's stderr")
	})

	t.Run("ListenTimeout", func(t *testing.T) {
		t.Parallel()
		_, err := childproc.Start(t.Context(), childproc.Options{Path: bin, Args: []string{"-silent"},
			ListenTimeout: 200 * time.Millisecond})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "did not listen within 200ms")
	})

	t.Run("Canceled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := childproc.Start(ctx, childproc.Options{Path: bin, Args: []string{"-silent"}})
		assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		_, err := childproc.Start(t.Context(), childproc.Options{Path: bin + "-missing"})
		assert.Error(t, err)
	})
}

func TestBuild(t *testing.T) {
	t.Run("CompileError", func(t *testing.T) {
		_, err := childproc.Build(t.Context(), t.TempDir(), "./testdata/missing")
		require.Error(t, err)
		assert.Contains(t, err.Error(), "go build ./testdata/missing")
	})
	t.Run("NoName", func(t *testing.T) {
		_, err := childproc.Build(t.Context(), t.TempDir(), ".")
		assert.Error(t, err)
	})
}
