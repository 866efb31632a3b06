package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// child is a server the load program runs as a separate process: canvasd
// or the baseline.
type child struct {
	name   string
	cmd    *exec.Cmd
	URL    string
	stderr *tailBuffer
	done   chan struct{}
	err    error
}

// startChild runs name (args) with env added to this process's
// environment and waits until it prints "listening on ADDR" on standard
// output.
func startChild(ctx context.Context, name string, env []string, args ...string) (*child, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stderr = c.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if a, ok := strings.CutPrefix(lines.Text(), "listening on "); ok {
				addr <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a := <-addr:
		c.URL = "http://" + a
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s exited before listening (%v): %s", name, c.err, c.stderr)
	case <-time.After(60 * time.Second):
		c.Stop()
		return nil, fmt.Errorf("%s did not listen within 60 s: %s", name, c.stderr)
	case <-ctx.Done():
		c.Stop()
		return nil, ctx.Err()
	}
}

// PID is the child's process id.
func (c *child) PID() int { return c.cmd.Process.Pid }

// Stop asks the child to stop (SIGTERM), and kills it after 30 s.
func (c *child) Stop() {
	select {
	case <-c.done:
		return
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// buildCanvasd builds cmd/canvasd into dir and returns the binary's path.
func buildCanvasd(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "canvasd-bin")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/promptcanvas/promptcanvas/cmd/canvasd")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/canvasd: %w: %s", err, out.String())
	}
	return bin, nil
}

// api sends the load program's setup requests to a canvasd.
type api struct {
	url    string
	key    string
	client *http.Client
}

// do sends method path with body (JSON, when not nil) and returns the
// response with its body read; a status other than want is an error.
func (a *api) do(ctx context.Context, method, path string, body any, want int) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url+path, rd)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != want {
		return nil, nil, fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	return resp, b, nil
}

// create sends a POST that answers 201 and returns the id it created.
func (a *api) create(ctx context.Context, path string, body any) (string, error) {
	_, b, err := a.do(ctx, http.MethodPost, path, body, http.StatusCreated)
	if err != nil {
		return "", err
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ID == "" {
		return "", fmt.Errorf("POST %s: no id in %s", path, b)
	}
	return out.ID, nil
}

// fixture is what the scenarios run against: a canvas whose production
// environment serves an echo version, and one canvas with two versions per
// publisher.
type fixture struct {
	canvasID string
	// versionPath is GET /environment/version of the canvas' production.
	versionPath string
	// completion is the body of a sync echo completion of the canvas.
	completion []byte
	// publishers holds, per publisher, the canvas and its two versions.
	publishers []publisherCanvas
}

type publisherCanvas struct {
	canvasID string
	versions [2]string
}

// versionBody is a version of the fixture's canvases: the echo model, one
// system message with one required variable.
func versionBody(canvasID, title string) map[string]any {
	return map[string]any{
		"promptId":      canvasID,
		"title":         title,
		"configuration": map[string]any{"model": "echo", "type": "chat", "temperature": 0.2},
		"variables":     []map[string]any{{"name": "name", "type": "text", "required": true}},
		"message": map[string]any{"role": "system",
			"content": "You answer {{name}}'s questions about billing, briefly and politely."},
	}
}

// setup creates the fixture through the HTTP API.
func setup(ctx context.Context, a *api, publishers int) (*fixture, error) {
	project, err := a.create(ctx, "/projects", map[string]any{"name": "bench"})
	if err != nil {
		return nil, err
	}
	newCanvas := func(title string, versions int) (string, []string, error) {
		id, err := a.create(ctx, "/prompt", map[string]any{"title": title, "projectId": project})
		if err != nil {
			return "", nil, err
		}
		var vs []string
		for i := range versions {
			v, err := a.create(ctx, "/prompt-version", versionBody(id, fmt.Sprintf("v%d", i+1)))
			if err != nil {
				return "", nil, err
			}
			vs = append(vs, v)
		}
		return id, vs, nil
	}
	f := &fixture{}
	id, vs, err := newCanvas("Support bot", 1)
	if err != nil {
		return nil, err
	}
	f.canvasID = id
	if _, _, err := a.do(ctx, http.MethodPost, "/environment/publish", publishBody(id, vs[0]), http.StatusCreated); err != nil {
		return nil, err
	}
	f.versionPath = "/environment/version?resourceType=prompt&resourceId=" + id + "&envName=production"
	f.completion, _ = json.Marshal(map[string]any{"canvas_id": id, "environment_name": "production",
		"variables": map[string]any{"name": "Ada"}})
	for i := range publishers {
		id, vs, err := newCanvas(fmt.Sprintf("Publisher %d", i+1), 2)
		if err != nil {
			return nil, err
		}
		f.publishers = append(f.publishers, publisherCanvas{canvasID: id, versions: [2]string{vs[0], vs[1]}})
	}
	return f, nil
}

// publishBody is POST /environment/publish of version to canvas'
// production.
func publishBody(canvasID, versionID string) map[string]any {
	return map[string]any{"resourceType": "prompt", "resourceId": canvasID, "envName": "production",
		"versionId": versionID}
}

// capture sends method path with body to canvasd and returns its answer as
// the baseline serves it: every header but Date, and the exact body.
func capture(ctx context.Context, a *api, method, path string, body []byte, want int) (cannedResponse, error) {
	var b any
	if body != nil {
		b = json.RawMessage(body)
	}
	resp, raw, err := a.do(ctx, method, path, b, want)
	if err != nil {
		return cannedResponse{}, err
	}
	h := resp.Header.Clone()
	h.Del("Date")
	p, _, _ := strings.Cut(path, "?")
	return cannedResponse{Method: method, Path: p, Status: resp.StatusCode, Header: h, Body: raw}, nil
}
