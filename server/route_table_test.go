package server_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/vault"
)

// routeRequest is one request of a routeCase.
type routeRequest struct {
	path    string
	body    any // nil, or a value sent as JSON
	headers []string
	// page marks a console page, whose answer is not JSON: openapi.json
	// gives it no schema that kin-openapi can check, so it is sent without
	// the harness's document validation.
	page bool
	// stream marks an event stream, which does not end: a 200 is read as
	// its status and headers, any other answer in full.
	stream bool
}

// routeCase is one route of the server as the table tests send it: a
// request that a caller allowed to make it makes successfully, aimed at the
// resources of a world.
type routeCase struct {
	// route is the pattern the server registers, "METHOD /path".
	route string
	// role is the least role that may call the route; "" marks a public
	// route, which never reads a token.
	role canvas.Role
	// scoped tells that the request names resources of the world's
	// workspace inside project P1: a caller of another workspace gets 404,
	// and one limited to another project 403. Without it the request acts
	// in the caller's own workspace and those callers succeed too.
	scoped bool
	// ok is the status of an allowed caller. Review and resume answer 409:
	// the world's run waits for neither, which the route checks only once
	// the caller is allowed.
	ok int
	// request builds the request; it is called for every request sent, so
	// that a route that deletes or ends its target gets a new one each time.
	request func(t *testing.T) routeRequest
}

// method returns the route's method.
func (c routeCase) method() string { m, _, _ := strings.Cut(c.route, " "); return m }

// jsonBody reports whether the route takes a JSON body.
func (c routeCase) jsonBody(t *testing.T) bool { return c.request(t).body != nil }

// fixed returns a request builder that always sends the same request.
func fixed(path string, body any, headers ...string) func(*testing.T) routeRequest {
	return func(*testing.T) routeRequest { return routeRequest{path: path, body: body, headers: headers} }
}

// page returns a request builder of a console page.
func page(path string) func(*testing.T) routeRequest {
	return func(*testing.T) routeRequest { return routeRequest{path: path, page: true} }
}

// browserPage returns a request builder of a page as a browser asks for
// it, accepting HTML; redirects are followed.
func browserPage(path string) func(*testing.T) routeRequest {
	return func(*testing.T) routeRequest {
		return routeRequest{path: path, page: true, headers: []string{"Accept", "text/html,application/xhtml+xml,*/*;q=0.8"}}
	}
}

// fresh returns a request builder whose path names a new target made by
// make for every request.
func fresh(format string, make func(*testing.T) string, body any, headers ...string) func(*testing.T) routeRequest {
	return func(t *testing.T) routeRequest {
		return routeRequest{path: strings.Replace(format, "{}", make(t), 1), body: body, headers: headers}
	}
}

// routeCases returns a case for every route of the server, aimed at w.
func routeCases(w *world) []routeCase {
	e := w.e
	date := []string{"x-compatibility-date", compatDate}
	q := "?resourceType=prompt&resourceId=" + w.Canvas
	version := map[string]any{"promptId": w.Canvas, "title": "v"}
	viewer, editor, admin := canvas.RoleViewer, canvas.RoleEditor, canvas.RoleAdmin
	return []routeCase{
		{"GET /healthz", "", false, 200, fixed("/healthz", nil)},
		{"GET /openapi.json", "", false, 200, fixed("/openapi.json", nil)},
		{"GET /console", "", false, 200, page("/console")},
		{"GET /console/{file}", "", false, 200, page("/console/app.js")},
		{"GET /{$}", "", false, 200, browserPage("/")},

		{"POST /projects", admin, false, 201, fixed("/projects", map[string]any{"name": "p"})},
		{"GET /projects", viewer, false, 200, fixed("/projects", nil)},
		{"GET /api-keys", admin, false, 200, fixed("/api-keys", nil)},
		{"POST /api-keys", admin, false, 201, fixed("/api-keys", map[string]any{"role": "viewer"})},
		{"DELETE /api-keys/{id}", admin, true, 204, fresh("/api-keys/{}", w.NewKey, nil)},
		{"GET /actors", viewer, false, 200, fixed("/actors?id=system&id=user-1", nil)},
		{"GET /me", viewer, false, 200, fixed("/me", nil)},
		{"GET /audit-events", admin, false, 200, fixed("/audit-events?resourceType=prompt&limit=5", nil)},

		{"POST /prompt", editor, true, 201, fixed("/prompt", map[string]any{"title": "t", "projectId": w.P1})},
		{"GET /prompt", viewer, false, 200, fixed("/prompt", nil)},
		{"GET /prompt/{id}", viewer, true, 200, fixed("/prompt/"+w.Canvas, nil)},
		{"GET /prompt/{id}/dependents", viewer, true, 200, fixed("/prompt/"+w.Canvas+"/dependents", nil)},
		{"PATCH /prompt/{id}", editor, true, 200, fixed("/prompt/"+w.Canvas, map[string]any{"title": "Support"})},
		{"DELETE /prompt/{id}", editor, true, 204, fresh("/prompt/{}", func(t *testing.T) string {
			return mustCanvas(t, e.testEnv, w.P1, "victim")["id"].(string)
		}, nil)},

		{"POST /prompt-version", editor, true, 201, fixed("/prompt-version", version)},
		{"GET /prompt-version", viewer, true, 200, fixed("/prompt-version?promptId="+w.Canvas, nil)},
		{"GET /prompt-version/{id}", viewer, true, 200, fixed("/prompt-version/"+w.Version, nil)},
		{"GET /prompt-version/{id}/diff", viewer, true, 200, fixed("/prompt-version/"+w.Version+"/diff?against="+w.WorkflowVersion, nil)},
		{"PATCH /prompt-version/{id}", editor, true, 200, fixed("/prompt-version/"+w.Version, map[string]any{"title": "v1"})},
		{"DELETE /prompt-version/{id}", editor, true, 204, fresh("/prompt-version/{}", func(t *testing.T) string {
			return mustCreate(t, e.testEnv, "/prompt-version", e.Editor, version)["id"].(string)
		}, nil)},

		{"POST /prompt-version-message", editor, true, 201, fixed("/prompt-version-message",
			map[string]any{"promptVersionId": w.Version, "role": "user", "content": "more", "index": 2})},
		{"GET /prompt-version-message", viewer, true, 200, fixed("/prompt-version-message?promptVersionId="+w.Version, nil)},
		{"PATCH /prompt-version-message/{id}", editor, true, 200, fixed("/prompt-version-message/"+w.Message,
			map[string]any{"content": "second"})},
		{"DELETE /prompt-version-message/{id}", editor, true, 204, fresh("/prompt-version-message/{}", func(t *testing.T) string {
			return mustCreate(t, e.testEnv, "/prompt-version-message", e.Editor,
				map[string]any{"promptVersionId": w.Version, "role": "user", "content": "victim", "index": 3})["id"].(string)
		}, nil)},

		{"POST /environment", editor, true, 201, func(*testing.T) routeRequest {
			return routeRequest{path: "/environment", body: map[string]any{"resourceType": "prompt", "resourceId": w.Canvas,
				"name": uniqueName("env")}}
		}},
		{"GET /environment", viewer, true, 200, fixed("/environment"+q, nil)},
		{"DELETE /environment/{id}", editor, true, 204, fresh("/environment/{}", w.NewEnvironment, nil)},
		{"PATCH /environment/{id}", admin, true, 200, fixed("/environment/"+w.Environment, map[string]any{"protected": false})},
		{"POST /environment/publish", editor, true, 201, func(t *testing.T) routeRequest {
			return routeRequest{path: "/environment/publish", body: map[string]any{"resourceType": "prompt",
				"resourceId": w.Canvas, "envName": "production", "versionId": w.NewVersion(t)}}
		}},
		{"GET /environment/versions", viewer, true, 200, fixed("/environment/versions"+q+"&envName=production", nil)},
		{"GET /environment/version", viewer, true, 200, fixed("/environment/version"+q+"&envName=production", nil)},
		{"GET /environment/split-stats", viewer, true, 200, fixed("/environment/split-stats"+q+"&envName=production", nil)},
		{"GET /environment/watch", viewer, true, 200, func(*testing.T) routeRequest {
			return routeRequest{path: "/environment/watch" + q + "&envName=production", stream: true}
		}},

		{"POST /publication-requests", editor, true, 201, func(t *testing.T) routeRequest {
			return routeRequest{path: "/publication-requests", body: map[string]any{"resourceType": "prompt",
				"resourceId": w.Canvas, "envName": "production", "versionId": w.NewVersion(t)}}
		}},
		{"GET /publication-requests", viewer, false, 200, fixed("/publication-requests?status=pending", nil)},
		{"GET /publication-requests/{id}", viewer, true, 200, fixed("/publication-requests/"+w.Request, nil)},
		{"POST /publication-requests/{id}/approve", editor, true, 200, fresh("/publication-requests/{}/approve",
			w.NewRequest, map[string]any{"comment": "looks right"})},
		{"POST /publication-requests/{id}/reject", editor, true, 200, fresh("/publication-requests/{}/reject",
			w.NewRequest, map[string]any{"comment": "not yet"})},
		// Only the requester, the world's Requester key, withdraws: any
		// other caller allowed to try is refused once the route checks it.
		{"POST /publication-requests/{id}/withdraw", editor, true, 403, fresh("/publication-requests/{}/withdraw",
			w.NewRequest, map[string]any{"comment": "not mine"})},

		{"POST /v2/chat/completions", editor, true, 200, fixed("/v2/chat/completions",
			map[string]any{"canvas_id": w.Canvas, "variables": map[string]any{"name": "Ada"}})},
		{"GET /v2/chat/completions", viewer, false, 200, fixed("/v2/chat/completions", nil)},
		{"GET /v2/chat/completions/{id}", viewer, true, 200, fixed("/v2/chat/completions/"+w.Completion, nil)},
		{"POST /openai/v1/chat/completions", editor, true, 200, fixed("/openai/v1/chat/completions",
			map[string]any{"model": "canvas:" + w.Canvas, "messages": []any{map[string]any{"role": "user", "content": "Hi"}},
				"prompt_variables": map[string]any{"name": "Ada"}})},
		{"GET /openai/v1/models", viewer, false, 200, fixed("/openai/v1/models", nil)},
		{"POST /v2/chat/completions/{id}/feedback", editor, true, 200, fixed("/v2/chat/completions/"+w.Completion+"/feedback",
			map[string]any{"score": 0.5, "comment": "fine"})},
		{"POST /v1/tasks", editor, false, 202, fixed("/v1/tasks", map[string]any{"prompt": "Hi"})},
		{"GET /v1/tasks", viewer, false, 200, fixed("/v1/tasks", nil)},
		{"GET /v1/tasks/{id}", viewer, true, 200, fixed("/v1/tasks/"+w.Task, nil)},

		{"POST /v3/files", editor, false, 201, fixed("/v3/files", map[string]any{"fileName": "a.txt"}, date...)},
		{"GET /v3/files", viewer, false, 200, fixed("/v3/files", nil, date...)},
		{"GET /v3/files/{id}", viewer, true, 200, fixed("/v3/files/"+w.File, nil, date...)},
		{"DELETE /v3/files/{id}", editor, true, 204, fresh("/v3/files/{}", w.NewFile, nil, date...)},
		{"PUT /v3/files/{id}/content", "", false, 200, func(t *testing.T) routeRequest {
			r := e.Do(http.MethodPost, "/v3/files", e.Editor, map[string]any{"fileName": "b.txt"}, date...)
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			var up vault.Upload
			r.JSON(t, &up)
			u, err := url.Parse(up.UploadURL)
			require.NoError(t, err)
			return routeRequest{path: u.RequestURI(), body: []byte("bytes"), headers: []string{"Content-Type", "text/plain"}}
		}},

		{"POST /test-case", editor, true, 201, fixed("/test-case", map[string]any{"promptId": w.Canvas, "title": "t"})},
		{"GET /test-case", viewer, true, 200, fixed("/test-case?promptId="+w.Canvas, nil)},
		{"GET /test-case/{id}", viewer, true, 200, fixed("/test-case/"+w.TestCase, nil)},
		{"PATCH /test-case/{id}", editor, true, 200, fixed("/test-case/"+w.TestCase, map[string]any{"title": "greets"})},
		{"DELETE /test-case/{id}", editor, true, 204, fresh("/test-case/{}", w.NewTestCase, nil)},
		{"POST /test-case/bulk-add-tags", editor, true, 200, fixed("/test-case/bulk-add-tags",
			map[string]any{"testCaseIds": []string{w.TestCase}, "tagIds": []string{w.Tag}})},
		{"POST /test-case/bulk-remove-tags", editor, true, 200, fixed("/test-case/bulk-remove-tags",
			map[string]any{"testCaseIds": []string{w.TestCase}, "tagIds": []string{w.Tag}})},
		{"POST /test-case-tags", editor, true, 201, fixed("/test-case-tags", map[string]any{"name": "n", "promptId": w.Canvas})},
		{"GET /test-case-tags", viewer, true, 200, fixed("/test-case-tags?promptId="+w.Canvas, nil)},
		{"GET /test-case-tags/{id}", viewer, true, 200, fixed("/test-case-tags/"+w.Tag, nil)},
		{"PATCH /test-case-tags/{id}", editor, true, 200, fixed("/test-case-tags/"+w.Tag, map[string]any{"color": "blue"})},
		{"DELETE /test-case-tags/{id}", editor, true, 204, fresh("/test-case-tags/{}", func(t *testing.T) string {
			return mustCreate(t, e.testEnv, "/test-case-tags", e.Editor, map[string]any{"name": "victim", "promptId": w.Canvas})["id"].(string)
		}, nil)},

		{"POST /test-case/{id}/run", editor, true, 200, fixed("/test-case/"+w.TestCase+"/run", map[string]any{"promptVersionId": w.Version})},
		{"POST /test-case/run", editor, true, 200, fixed("/test-case/run", map[string]any{"promptId": w.Canvas, "promptVersionId": w.Version})},
		{"GET /test-case/generations/{id}", viewer, true, 200, fixed("/test-case/generations/"+w.Generation, nil)},
		{"POST /test-case/generations/{id}/abort", editor, true, 200, fresh("/test-case/generations/{}/abort", func(t *testing.T) string {
			return w.RunTestCase(t)["generationId"].(string)
		}, nil)},
		{"GET /test-case/executions/{executionId}", viewer, true, 200, fixed("/test-case/executions/"+w.Execution, nil)},

		{"POST /experiments", editor, true, 202, fixed("/experiments", map[string]any{"promptId": w.Canvas,
			"versionIds": []string{w.Version}, "evaluators": []map[string]any{{"id": w.Evaluator}}})},
		{"GET /experiments", viewer, true, 200, fixed("/experiments?promptId="+w.Canvas, nil)},
		{"GET /experiments/{id}", viewer, true, 200, fixed("/experiments/"+w.Experiment, nil)},
		{"POST /experiments/{id}/cancel", editor, true, 200, fresh("/experiments/{}/cancel", w.NewExperiment, nil)},
		{"GET /experiments/{id}/results", viewer, true, 200, fixed("/experiments/"+w.Experiment+"/results?versionId="+w.Version, nil)},
		{"GET /experiments/{id}/compare", viewer, true, 200, fixed("/experiments/"+w.Experiment+"/compare?baseline="+
			w.Version+"&candidate="+w.Version, nil)},
		{"POST /experiments/{id}/results/{resultId}/annotation", editor, true, 200,
			fixed("/experiments/"+w.Experiment+"/results/"+w.Result+"/annotation", map[string]any{"passed": true, "score": 0.5,
				"comment": "fine"})},
		{"POST /evaluators", editor, true, 201, func(*testing.T) routeRequest {
			return routeRequest{path: "/evaluators", body: map[string]any{"promptId": w.Canvas, "name": uniqueName("hook"),
				"type": "webhook", "url": "https://example.com/judge"}}
		}},
		{"GET /evaluators", viewer, true, 200, fixed("/evaluators?promptId="+w.Canvas, nil)},

		{"POST /applications", admin, true, 201, fixed("/applications", map[string]any{"name": "a", "promptId": w.Canvas})},
		{"GET /applications", viewer, false, 200, fixed("/applications", nil)},
		{"GET /applications/{id}", viewer, true, 200, fixed("/applications/"+w.App, nil)},
		{"PATCH /applications/{id}", admin, true, 200, fixed("/applications/"+w.App, map[string]any{"name": "shop"})},
		{"DELETE /applications/{id}", admin, true, 204, fresh("/applications/{}", w.NewApp, nil)},
		{"POST /applications/{id}/events/rotate-secret", admin, true, 200, fixed("/applications/"+w.App+"/events/rotate-secret", nil)},
		{"POST /applications/{id}/events/test", admin, true, 200, fixed("/applications/"+w.App+"/events/test", map[string]any{})},

		{"POST /credentials", admin, true, 201, func(*testing.T) routeRequest {
			return routeRequest{path: "/credentials", body: map[string]any{"name": uniqueName("cred"), "provider": "anthropic",
				"apiKey": "sk-ant-route-key-0002", "projectIds": []string{w.P1}}}
		}},
		{"GET /credentials", viewer, false, 200, fixed("/credentials", nil)},
		{"GET /credentials/{id}", viewer, true, 200, fixed("/credentials/"+w.Credential, nil)},
		{"PATCH /credentials/{id}", admin, true, 200, fixed("/credentials/"+w.Credential,
			map[string]any{"settings": map[string]any{"timeoutSeconds": 30}})},
		{"DELETE /credentials/{id}", admin, true, 204, fresh("/credentials/{}", w.NewCredential, nil)},
		{"GET /models", viewer, false, 200, fixed("/models", nil)},
		{"PUT /models/{name...}", admin, false, 200, fixed("/models/llama3.1:8b", map[string]any{"provider": "openai-compatible",
			"inputPerMillion": 0, "outputPerMillion": 0})},
		{"DELETE /models/{name...}", admin, true, 204, fresh("/models/{}", w.NewPrice, nil)},

		{"GET /webhooks/deliveries", viewer, false, 200, fixed("/webhooks/deliveries", nil)},
		{"GET /webhooks/deliveries/{id}", viewer, true, 200, fixed("/webhooks/deliveries/"+w.Delivery, nil)},
		{"POST /webhooks/deliveries/{id}/redeliver", admin, true, 202, fixed("/webhooks/deliveries/"+w.Delivery+"/redeliver", nil)},

		{"POST /workflow/runs", editor, true, 201, fixed("/workflow/runs", map[string]any{"versionId": w.WorkflowVersion,
			"input": map[string]any{"name": "Ada"}})},
		{"GET /workflow/runs", viewer, true, 200, fixed("/workflow/runs?promptId="+w.Canvas, nil)},
		{"GET /workflow/runs/{id}", viewer, true, 200, fixed("/workflow/runs/"+w.WorkflowRun, nil)},
		{"POST /workflow/runs/{id}/cancel", editor, true, 200, fresh("/workflow/runs/{}/cancel", w.NewWorkflowRun, nil)},
		{"POST /workflow/runs/{id}/review", editor, true, 409, fixed("/workflow/runs/"+w.WorkflowRun+"/review", map[string]any{"approved": true})},
		{"POST /workflow/runs/{id}/resume", editor, true, 409, fixed("/workflow/runs/"+w.WorkflowRun+"/resume", map[string]any{"input": "done"})},

		{"GET /review-queue", viewer, true, 200, fixed("/review-queue?promptId="+w.Canvas, nil)},
		{"POST /review-queue", editor, true, 201, func(t *testing.T) routeRequest {
			return routeRequest{path: "/review-queue", body: map[string]any{"runId": w.NewCompletion(t)}}
		}},
		{"GET /review-queue/stats", viewer, true, 200, fixed("/review-queue/stats?promptId="+w.Canvas, nil)},
		{"GET /review-queue/{id}", viewer, true, 200, fixed("/review-queue/"+w.ReviewItem, nil)},
		{"POST /review-queue/{id}/annotation", editor, true, 200, fixed("/review-queue/"+w.ReviewItem+"/annotation",
			map[string]any{"passed": true, "score": 0.9})},
		{"POST /review-queue/{id}/test-case", editor, true, 201, fixed("/review-queue/"+w.ReviewItem+"/test-case", nil)},
	}
}

// requireEveryRoute fails unless cases hold exactly one case per route of
// the server, so that a route added without its case fails the tests that
// walk the table.
func requireEveryRoute(t *testing.T, cases []routeCase) {
	t.Helper()
	patterns, err := server.RoutePatterns()
	require.NoError(t, err)
	var covered []string
	for _, c := range cases {
		covered = append(covered, c.route)
	}
	sort.Strings(patterns)
	sort.Strings(covered)
	require.Equal(t, patterns, covered, "every route of the server has one case, and every case a route")
}

// send sends the case's request as token.
func (c routeCase) send(t *testing.T, e *testEnv, token string) *testResponse {
	t.Helper()
	r := c.request(t)
	if !r.page && !r.stream {
		return e.Do(c.method(), r.path, token, r.body, r.headers...)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.method(), e.URL+r.path, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		req.Header.Set(r.headers[i], r.headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if r.stream && resp.StatusCode == http.StatusOK {
		return &testResponse{Status: resp.StatusCode, Header: resp.Header}
	}
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &testResponse{Status: resp.StatusCode, Header: resp.Header, Body: body}
}

func TestRouteTable_OK(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	cases := routeCases(w)
	requireEveryRoute(t, cases)
	for _, c := range cases {
		t.Run(c.route, func(t *testing.T) {
			token := e.Admin
			if c.role == "" {
				token = ""
			}
			r := c.send(t, e.testEnv, token)
			assert.Equal(t, c.ok, r.Status, "%s", r.Body)
		})
	}
}
