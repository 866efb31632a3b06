// Command files walks through files in completions over HTTP, in-process:
// it starts the reference server's handler on a loopback test server with
// the file vault, uploads a text file in two steps (POST /v3/files for an
// upload URL, then PUT the bytes there without credentials), reads the
// file's metadata back, and runs a canvas whose {{doc}} file variable takes
// the file's vault:// address on the offline echo model, which shows the
// file as a marker followed by its inlined text.
//
//	go run ./examples/files
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/examples/internal/demo"
	"github.com/promptcanvas/promptcanvas/model"
	"github.com/promptcanvas/promptcanvas/server"
)

// compatibilityDate is sent as x-compatibility-date on the file operations.
const compatibilityDate = "2025-01-01"

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run does the walk-through and writes its report to w. The report holds
// no ids or times, so it is the same on every run.
func run(ctx context.Context, w io.Writer) error {
	// The calls go over HTTP with the admin API key Bootstrap creates, not
	// as the Principal in the context.
	// The upload URLs the vault signs start with the server's address, so
	// the test server starts first and gets its handler right after.
	var handler http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	defer srv.Close()
	d, _, err := demo.Open(ctx, "files", canvas.RoleAdmin, engine.Options{BaseURL: srv.URL})
	if err != nil {
		return err
	}
	defer d.Close()
	handler, err = server.New(server.Options{Engine: d.Engine, Auth: server.NewAuthenticator(server.AuthOptions{Store: d.Store, Changes: d.Changes})})
	if err != nil {
		return err
	}
	c := client{base: srv.URL, token: d.AdminToken}

	// A canvas whose prompt reads one file.
	var project, cv, version struct{ ID string }
	if err := c.do(http.MethodPost, "/projects", map[string]any{"name": "Docs"}, &project); err != nil {
		return err
	}
	if err := c.do(http.MethodPost, "/prompt", map[string]any{"title": "Summarizer", "projectId": project.ID}, &cv); err != nil {
		return err
	}
	if err := c.do(http.MethodPost, "/prompt-version", map[string]any{
		"promptId":      cv.ID,
		"configuration": map[string]any{"model": model.EchoModel},
		"variables":     []any{map[string]any{"name": "doc", "type": "file", "required": true}},
		"message":       map[string]any{"role": "user", "content": "Summarize this:\n{{doc}}"},
	}, &version); err != nil {
		return err
	}

	// Step 1: ask for an upload address.
	var upload struct {
		ID        string `json:"id"`
		UploadURL string `json:"uploadUrl"`
	}
	if err := c.do(http.MethodPost, "/v3/files", map[string]any{"fileName": "notes.txt"}, &upload); err != nil {
		return err
	}
	fmt.Fprintf(w, "upload URL issued: %t\n", upload.UploadURL != "")

	// Step 2: send the bytes there, without Authorization.
	content := "Group commit batches many transactions into one fsync."
	req, err := http.NewRequest(http.MethodPut, upload.UploadURL, bytes.NewReader([]byte(content)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "text/plain")
	if err := send(req, http.StatusOK, nil); err != nil {
		return err
	}

	var meta struct {
		FileName string `json:"fileName"`
		MimeType string `json:"mimeType"`
		Size     int64  `json:"size"`
		SHA256   string `json:"sha256"`
		Status   string `json:"status"`
	}
	if err := c.do(http.MethodGet, "/v3/files/"+upload.ID, nil, &meta); err != nil {
		return err
	}
	fmt.Fprintf(w, "file: %s, %s, %d bytes, %s\nsha256: %s\n", meta.FileName, meta.MimeType, meta.Size, meta.Status, meta.SHA256)

	// Run the canvas with the file's vault:// address.
	var answer struct {
		Choices []struct {
			Message struct {
				Content struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := c.do(http.MethodPost, "/v2/chat/completions", map[string]any{
		"canvas_id": cv.ID, "version_id": version.ID,
		"variables": map[string]any{"doc": map[string]any{"file_url": "vault://" + upload.ID}},
	}, &answer); err != nil {
		return err
	}
	if len(answer.Choices) != 1 {
		return fmt.Errorf("expected one choice, got %d", len(answer.Choices))
	}
	fmt.Fprintf(w, "answer:\n%s\n", answer.Choices[0].Message.Content.Text)
	return nil
}

// client calls the API with a bearer token.
type client struct {
	base  string
	token string
}

// do sends body as JSON to path (with the x-compatibility-date header on
// the file operations) and decodes a 2xx answer into out.
func (c client) do(method, path string, body, out any) error {
	var r io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if strings.HasPrefix(path, "/v3/files") {
		req.Header.Set("x-compatibility-date", compatibilityDate)
	}
	return send(req, 0, out)
}

// send sends req and decodes its answer into out (when not nil). want is
// the expected status; zero accepts any 2xx.
func send(req *http.Request, want int, out any) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if (want != 0 && resp.StatusCode != want) || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("%s %s: HTTP %d: %s", req.Method, req.URL.Path, resp.StatusCode, raw)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}
