package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// documentRefuses reports the error openapi.json finds in a request, or nil
// when the document accepts it.
func documentRefuses(t *testing.T, method, path string, body []byte, headers ...string) error {
	t.Helper()
	o := loadOpenAPI(t)
	req, err := http.NewRequest(method, "http://127.0.0.1:1"+path, bytes.NewReader(body))
	require.NoError(t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer x")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	route, params, err := o.router.FindRoute(req)
	require.NoError(t, err)
	req.Body = io.NopCloser(bytes.NewReader(body))
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true,
			AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil }},
	})
}

// TestOpenAPI_RefusesWhatServerRefuses sends requests the server refuses
// for one rule each, and checks that openapi.json states that rule: a
// client that validates against the document learns of it before sending.
func TestOpenAPI_RefusesWhatServerRefuses(t *testing.T) {
	e := newFullEnv(t)
	w := newWorld(t, e)
	body := func(v any) []byte {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return b
	}
	date := "x-compatibility-date"
	tests := []struct {
		name, method, path string
		body               []byte
		headers            []string
		status             int
	}{
		{"EnvironmentNamePattern", "POST", "/environment", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "name": "Not Valid"}), nil, 400},
		{"EnvironmentNameLength", "POST", "/environment", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "name": strings.Repeat("a", 65)}), nil, 400},
		{"EnvironmentNameReserved", "POST", "/environment", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "name": "production"}), nil, 400},
		{"EnvironmentNameUUID", "POST", "/environment/publish", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "envName": w.Canvas, "versionId": w.Version}), nil, 400},
		{"PublishVersionAndSplit", "POST", "/environment/publish", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "envName": "production", "versionId": w.Version,
			"split": []any{map[string]any{"versionId": w.Version, "weight": 50}, map[string]any{"versionId": w.Canvas, "weight": 50}}}), nil, 422},
		{"PublishNeither", "POST", "/environment/publish", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "envName": "production"}), nil, 422},
		{"PublishSplitWeight", "POST", "/environment/publish", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "envName": "production",
			"split": []any{map[string]any{"versionId": w.Version, "weight": 100}, map[string]any{"versionId": w.Canvas, "weight": 0}}}), nil, 422},
		{"PublishSplitOneEntry", "POST", "/environment/publish", body(map[string]any{"resourceType": "prompt", "resourceId": w.Canvas, "envName": "production",
			"split": []any{map[string]any{"versionId": w.Version, "weight": 99}}}), nil, 422},
		{"AssignmentKeyTooLong", "GET", "/environment/version?resourceType=prompt&resourceId=" + w.Canvas + "&envName=production&assignmentKey=" + strings.Repeat("k", 257), nil, nil, 422},
		{"CompletionAssignmentKeyTooLong", "POST", "/v2/chat/completions", body(map[string]any{"canvas_id": w.Canvas, "assignment_key": strings.Repeat("k", 257)}), nil, 422},
		{"FeedbackScore", "POST", "/v2/chat/completions/" + w.Completion + "/feedback", body(map[string]any{"score": 1.5}), nil, 422},
		{"FeedbackWithoutScore", "POST", "/v2/chat/completions/" + w.Completion + "/feedback", body(map[string]any{"comment": "x"}), nil, 422},
		{"EnvironmentNameQuery", "GET", "/environment/versions?resourceType=prompt&resourceId=" + w.Canvas + "&envName=Bad_Name", nil, nil, 400},
		{"CompletionEnvironmentName", "POST", "/v2/chat/completions", body(map[string]any{"canvas_id": w.Canvas, "environment_name": "-x"}), nil, 400},
		{"ApplicationEnvironmentName", "POST", "/applications", body(map[string]any{"name": "a", "environmentName": "latest"}), nil, 400},
		{"CanvasTitleEmpty", "POST", "/prompt", body(map[string]any{"projectId": w.P1, "title": ""}), nil, 422},
		{"CanvasTitleBlank", "PATCH", "/prompt/" + w.Canvas, body(map[string]any{"title": " \u00a0\t"}), nil, 422},
		{"VersionTitleBlank", "PATCH", "/prompt-version/" + w.Version, body(map[string]any{"title": "  "}), nil, 422},
		{"ProjectNameBlank", "POST", "/projects", body(map[string]any{"name": "   "}), nil, 422},
		{"TagNameBlank", "POST", "/test-case-tags", body(map[string]any{"name": " ", "promptId": w.Canvas}), nil, 422},
		{"WorkflowWithoutSpec", "POST", "/prompt-version", body(map[string]any{"promptId": w.Canvas, "isWorkflow": true}), nil, 422},
		{"TestCasesAndTags", "POST", "/test-case/run", body(map[string]any{"promptId": w.Canvas, "promptVersionId": w.Version,
			"testCaseIds": []string{w.TestCase}, "tagIds": []string{w.Tag}}), nil, 422},
		{"ToolMessageWithoutCallID", "POST", "/v2/chat/completions", body(map[string]any{"canvas_id": w.Canvas, "messages": []any{map[string]any{"role": "tool", "content": "x"}}}), nil, 422},
		{"AssistantMessageEmpty", "POST", "/v2/chat/completions", body(map[string]any{"canvas_id": w.Canvas, "messages": []any{map[string]any{"role": "assistant"}}}), nil, 422},
		{"UserMessageWithToolCalls", "POST", "/v2/chat/completions", body(map[string]any{"canvas_id": w.Canvas, "messages": []any{map[string]any{"content": "x",
			"toolCalls": []any{map[string]any{"id": "c", "name": "f", "arguments": map[string]any{}}}}}}), nil, 422},
		{"EnvironmentWithVersion", "POST", "/v2/chat/completions", body(map[string]any{"canvas_id": w.Canvas, "environment_name": "production", "version_id": w.Version}), nil, 422},
		{"WebhookURLWithoutHost", "POST", "/v1/tasks", body(map[string]any{"prompt": "Hi", "webhook_url": "http:///x"}), nil, 422},
		{"SubscriptionURLWithoutHost", "POST", "/applications", body(map[string]any{"name": "a", "events": map[string]any{"url": "https://"}}), nil, 422},
		{"SubscriptionSecret", "POST", "/applications", body(map[string]any{"name": "a", "events": map[string]any{"secret": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}), nil, 422},
		{"IdempotencyKeyNotASCII", "POST", "/v1/tasks", body(map[string]any{"prompt": "Hi"}), []string{"Idempotency-Key", "clé"}, 422},
		{"IdempotencyKeyTooLong", "POST", "/v1/tasks", body(map[string]any{"prompt": "Hi"}), []string{"Idempotency-Key", strings.Repeat("k", 256)}, 422},
		{"CompatibilityDateTooEarly", "POST", "/v3/files", body(map[string]any{"fileName": "a.txt"}), []string{date, "2024-12-31"}, 400},
		{"CompatibilityDateNotADay", "POST", "/v3/files", body(map[string]any{"fileName": "a.txt"}), []string{date, "2025-02-30"}, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b any
			if tt.body != nil {
				b = tt.body
			}
			r := e.Do(tt.method, tt.path, e.Admin, b, tt.headers...)
			require.Equal(t, tt.status, r.Status, "the server refuses it: %s", r.Body)
			assert.Error(t, documentRefuses(t, tt.method, tt.path, tt.body, tt.headers...), "openapi.json refuses it too")
		})
	}
}

// TestOpenAPI_PatternsPortable checks that every pattern of the document
// uses only the regular expression syntax that ECMA-262, Python's re and
// Go's RE2 share, so that every common validator reads the document: no
// Unicode property classes (\p{…}), no \x{…} or named groups. The
// not-blank pattern lists the Unicode space separators one by one: it must
// refuse exactly what the class written with \p{Z} refuses.
func TestOpenAPI_PatternsPortable(t *testing.T) {
	raw, err := os.ReadFile("openapi.json")
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(raw, &doc))
	patterns := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if s, ok := c.(string); ok && k == "pattern" {
					patterns[s] = true
				} else {
					walk(c)
				}
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(doc)
	require.NotEmpty(t, patterns)
	const blankClass = "[^\\t\\n\\v\\f\\r\\x85 \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
	sawBlank := false
	for p := range patterns {
		_, err := regexp.Compile(p)
		require.NoError(t, err, "%q", p)
		for _, bad := range []string{`\p{`, `\P{`, `\x{`, `(?P<`, `(?<`, `\A`, `\z`} {
			assert.NotContains(t, p, bad, "pattern %q", p)
		}
		if strings.Contains(p, blankClass) {
			sawBlank = true
		}
	}
	require.True(t, sawBlank, "the not-blank class is in the document")
	listed := regexp.MustCompile("^" + blankClass + "$")
	reference := regexp.MustCompile(`^[^\t\n\v\f\r\x85\p{Z}]$`)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		if listed.MatchString(s) != reference.MatchString(s) {
			t.Fatalf("U+%04X: the listed class and \\p{Z} disagree", r)
		}
	}
}
