package childproc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Canvasd is the import path of canvasd, the program both callers run.
const Canvasd = "github.com/promptcanvas/promptcanvas/cmd/canvasd"

// listeningPrefix starts the line a child prints on standard output once
// it accepts connections; the rest of the line is its address.
const listeningPrefix = "listening on "

const (
	// defaultListenTimeout bounds the wait for the listening line when
	// Options.ListenTimeout is zero.
	defaultListenTimeout = 60 * time.Second
	// stopGrace is how long Stop waits after SIGTERM before it kills.
	stopGrace = 30 * time.Second
	// stderrTail is how much of the child's standard error is kept.
	stderrTail = 64 << 10
)

// Build compiles the main package pkg (an import path, or a path starting
// with ./ relative to the current directory) into dir and returns the
// binary's path. The binary is named after pkg's last element; go build
// creates dir when it is missing.
func Build(ctx context.Context, dir, pkg string) (string, error) {
	name := path.Base(pkg)
	if name == "." || name == ".." || name == "/" {
		return "", fmt.Errorf("childproc: build %q: the package path must end in a name", pkg)
	}
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w: %s", pkg, err, out.Bytes())
	}
	return bin, nil
}

// Options says what Start runs.
type Options struct {
	// Name names the child in errors; the binary's base name when empty.
	Name string
	// Path is the binary to run.
	Path string
	// Args are its command-line arguments.
	Args []string
	// Env is added to this process's environment.
	Env []string
	// ListenTimeout bounds the wait for the listening line; 60 s when
	// zero.
	ListenTimeout time.Duration
}

// Process is a child that has printed its listening line.
type Process struct {
	// Name is Options.Name, or the binary's base name.
	Name string
	// Addr is what the child printed after "listening on ", such as
	// 127.0.0.1:40123.
	Addr string
	// URL is "http://" followed by Addr.
	URL string

	cmd    *exec.Cmd
	stderr *tail
	done   chan struct{}
	err    error // how the process ended, once done is closed
}

// Start runs the child and waits until it prints "listening on ADDR" at
// the start of a line of its standard output. It fails, having killed the
// child, when the child ends first, when Options.ListenTimeout passes or
// when ctx ends; the error holds the tail of the child's standard error.
// ctx bounds only that wait, not the child's life: the caller ends the
// child with Stop or Kill.
func Start(ctx context.Context, o Options) (*Process, error) {
	name := o.Name
	if name == "" {
		name = filepath.Base(o.Path)
	}
	timeout := o.ListenTimeout
	if timeout == 0 {
		timeout = defaultListenTimeout
	}
	cmd := exec.Command(o.Path, o.Args...)
	cmd.Env = append(os.Environ(), o.Env...)
	stdout := &listenWatch{addr: make(chan string, 1)}
	p := &Process{Name: name, cmd: cmd, stderr: &tail{max: stderrTail}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = stdout, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case addr := <-stdout.addr:
		p.Addr, p.URL = addr, "http://"+addr
		return p, nil
	case <-p.done:
		// The listening line may have come just before the end.
		select {
		case addr := <-stdout.addr:
			return nil, fmt.Errorf("%s listened on %s and exited (%v): %s", name, addr, p.err, p.stderr)
		default:
		}
		return nil, fmt.Errorf("%s exited before listening (%v): %s", name, p.err, p.stderr)
	case <-timer.C:
		p.Kill()
		return nil, fmt.Errorf("%s did not listen within %s: %s", name, timeout, p.stderr)
	case <-ctx.Done():
		p.Kill()
		return nil, fmt.Errorf("%s: waiting for it to listen: %w", name, ctx.Err())
	}
}

// PID is the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Stderr returns the last 64 KiB the child wrote to standard error.
func (p *Process) Stderr() string { return p.stderr.String() }

// Signal sends sig to the child. It fails once the child has ended.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop asks the child to stop (SIGTERM), waits for it to end and kills it
// if it has not ended within 30 s. Later calls return at once.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.Kill()
	}
}

// Kill sends SIGKILL and waits for the child to end. Later calls return at
// once.
func (p *Process) Kill() {
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Wait waits for the child to end and returns how it ended, as
// exec.Cmd.Wait does: nil for exit status 0, an *exec.ExitError otherwise.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// listenWatch is the child's standard output: it sends the address of the
// first line that starts with "listening on " and discards everything.
// exec.Cmd writes to it from one goroutine.
type listenWatch struct {
	line  []byte // the start of the current line, up to maxLine bytes
	found bool
	addr  chan string
}

// maxLine bounds the part of a line listenWatch keeps: the listening line
// is short.
const maxLine = 4 << 10

func (w *listenWatch) Write(p []byte) (int, error) {
	n := len(p)
	for !w.found && len(p) > 0 {
		chunk, rest, eol := bytes.Cut(p, []byte("\n"))
		w.line = append(w.line, chunk[:min(len(chunk), maxLine-len(w.line))]...)
		if !eol {
			break
		}
		if addr, ok := strings.CutPrefix(strings.TrimSuffix(string(w.line), "\r"), listeningPrefix); ok {
			w.found, w.line = true, nil
			w.addr <- addr
		}
		w.line, p = w.line[:0], rest
	}
	return n, nil
}

// tail is an io.Writer, safe for concurrent use, that keeps the last max
// bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
