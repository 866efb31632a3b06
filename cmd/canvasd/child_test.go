package main

import (
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/internal/childproc"
	"github.com/stretchr/testify/require"
)

// buildCanvasd builds canvasd into a temporary directory and returns the
// binary's path.
func buildCanvasd(t testing.TB) string {
	t.Helper()
	bin, err := childproc.Build(t.Context(), t.TempDir(), childproc.Canvasd)
	require.NoError(t, err)
	return bin
}

// startChild runs the canvasd binary bin serving on a free loopback port
// with args added to its command line and env to this process's
// environment, and waits until it listens. The child is killed at the
// test's end.
func startChild(t testing.TB, name, bin string, args, env []string) *childproc.Process {
	t.Helper()
	c, err := childproc.Start(t.Context(), childproc.Options{Name: strings.TrimSpace("canvasd " + name), Path: bin,
		Args: append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), Env: env})
	require.NoError(t, err)
	t.Cleanup(c.Kill)
	return c
}
