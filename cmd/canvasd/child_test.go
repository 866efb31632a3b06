package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildCanvasd builds this package's binary into a temporary directory and
// returns its path.
func buildCanvasd(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "canvasd")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	return bin
}

// child is canvasd running as a child process.
type child struct {
	name   string
	cmd    *exec.Cmd
	URL    string
	stderr *output
	done   chan struct{}
	err    error // how the process ended, once done is closed
}

// startChild runs the canvasd binary bin serving on a free loopback port
// with args added to its command line and env to this process's
// environment, and waits until it listens. The child is killed at the
// test's end.
func startChild(t *testing.T, name, bin string, args, env []string) *child {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c := &child{name: name, cmd: cmd, stderr: newOutput(), done: make(chan struct{})}
	cmd.Stderr = c.stderr
	require.NoError(t, cmd.Start())
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(c.kill)
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
			c.URL = "http://" + addr
			go io.Copy(io.Discard, stdout)
			return c
		}
	}
	t.Fatalf("canvasd %s did not listen; stderr: %s", name, c.stderr)
	return nil
}

// kill sends SIGKILL and waits for the process to end; later calls return
// at once.
func (c *child) kill() {
	select {
	case <-c.done:
	default:
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
	}
}

// wait waits for the process to end and returns how it ended.
func (c *child) wait() error {
	<-c.done
	return c.err
}
