package server

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// FuzzDecodeJSON decodes any body as the request bodies of a completion
// (decodeCompletion), a task and a canvas (decodeJSON). It never panics,
// and every refusal is the caller's fault: BAD_REQUEST (not JSON),
// VALIDATION (with a detail for each problem) or PAYLOAD_TOO_LARGE, never
// INTERNAL.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"canvas_id": "8e03978e-40d5-43e8-bc93-6894a57f9324", "variables": {"name": "Ada"}, "async": true}`,
		`{"prompt": "Hello", "model": "echo", "variables": {"a": [1, {"b": null}]}}`,
		`{"title": "t", "customTags": ["a", 1], "inferencesPercentage": 1e400}`,
		`{"prompt": 1.5}`, `[]`, `null`, `{"a":`, `{} {}`, "\ufeff{}", "",
		`{"canvas_id": "8e03978e-40d5-43e8-bc93-6894a57f9324", "settings": {"maxTokens": 1e3, "structuredOutput": {"schema": {"b": 1, "a": 2}}}, "settings": {"structuredOutput": {"enabled": true, "schema": {"type": "object"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	s, err := newServer(Options{MaxBodyBytes: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for schema, decode := range map[string]func(*http.Request) error{
			"CompletionRequest": func(r *http.Request) error {
				_, err := s.decodeCompletion(r, func(bool) error { return nil })
				return err
			},
			"TaskRequest": func(r *http.Request) error { return s.decodeJSON(r, "TaskRequest", &wire.TaskRequest{}) },
			"CreateCanvasRequest": func(r *http.Request) error {
				return s.decodeJSON(r, "CreateCanvasRequest", &canvas.CreateCanvasParams{})
			},
		} {
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			err := decode(r)
			switch code := canvas.ErrorCode(err); code {
			case "", canvas.EBADREQUEST, canvas.EPAYLOADTOOLARGE:
			case canvas.EINVALID:
				if len(canvas.ErrorDetails(err)) == 0 {
					t.Fatalf("%s %q: VALIDATION without details", schema, body)
				}
			default:
				t.Fatalf("%s %q: code %s: %v", schema, body, code, err)
			}
		}
	})
}

// FuzzAuthorization authenticates any Authorization header against a real
// store with an HS256 secret configured, so that both API keys and JWTs
// are parsed. It never panics, never lets a made-up token in, and refuses
// as UNAUTHORIZED only; a bearer token it extracts is never empty and
// carries no surrounding blanks.
func FuzzAuthorization(f *testing.F) {
	for _, seed := range []string{
		"Bearer 8e03978e-40d5-43e8-bc93-6894a57f9324",
		"bearer   eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2ln",
		"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.",
		"Bearer eyJraWQiOnt9fQ.e30.",
		"Basic dXNlcjpwYXNz", "Bearer", "Bearer ", " Bearer x", "Bearer a.b.c.d", "",
	} {
		f.Add(seed)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(f.TempDir(), "canvas.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	auth := NewAuthenticator(AuthOptions{Store: db, Changes: db, JWTSecrets: [][]byte{[]byte("fuzz-secret-fuzz-secret-fuzz-secret")}})
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodGet, "/projects", nil)
		r.Header.Set("Authorization", header)
		if token, ok := bearerToken(r); ok && (token == "" || token != strings.TrimSpace(token)) {
			t.Fatalf("bearerToken(%q) = %q", header, token)
		}
		p, err := auth.Authenticate(r)
		if err == nil {
			t.Fatalf("Authorization %q let in %+v", header, p)
		}
		if code := canvas.ErrorCode(err); code != canvas.EUNAUTHORIZED {
			t.Fatalf("Authorization %q: code %s: %v", header, code, err)
		}
	})
}
