package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

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
	// includesPath is the resolved read (resolve=true) of a canvas whose
	// production version includes a canvas that includes a canvas that
	// includes a canvas: three nested includes.
	includesPath string
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
	if f.includesPath, err = setupIncludes(ctx, a, project); err != nil {
		return nil, err
	}
	for i := range publishers {
		id, vs, err := newCanvas(fmt.Sprintf("Publisher %d", i+1), 2)
		if err != nil {
			return nil, err
		}
		f.publishers = append(f.publishers, publisherCanvas{canvasID: id, versions: [2]string{vs[0], vs[1]}})
	}
	return f, nil
}

// setupIncludes creates four canvases of project, each but the last
// including the next in its production version, publishes them, and
// returns the resolved read of the first.
func setupIncludes(ctx context.Context, a *api, project string) (string, error) {
	next := ""
	for i := 3; i >= 0; i-- {
		id, err := a.create(ctx, "/prompt", map[string]any{"title": fmt.Sprintf("Layer %d", i), "projectId": project})
		if err != nil {
			return "", err
		}
		body := versionBody(id, "v1")
		if next != "" {
			body["message"] = map[string]any{"role": "system",
				"content": "Layer " + fmt.Sprint(i) + " for {{name}}.\n{{> " + next + "}}"}
		}
		v, err := a.create(ctx, "/prompt-version", body)
		if err != nil {
			return "", err
		}
		if _, _, err := a.do(ctx, http.MethodPost, "/environment/publish", publishBody(id, v), http.StatusCreated); err != nil {
			return "", err
		}
		next = id
	}
	return "/environment/version?resourceType=prompt&resourceId=" + next + "&envName=production&resolve=true", nil
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
