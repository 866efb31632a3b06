package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
)

// documentOperations returns every "METHOD /path" of openapi.json, and
// whether each one requires the bearer token.
func documentOperations(t *testing.T) map[string]bool {
	t.Helper()
	var doc struct {
		Security []map[string][]string `json:"security"`
		Paths    map[string]map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(openAPIDocument, &doc))
	require.NotEmpty(t, doc.Security, "bearer security is the document's default")
	ops := map[string]bool{}
	for path, item := range doc.Paths {
		for method, raw := range item {
			switch method {
			case "get", "put", "post", "patch", "delete", "head", "options":
			default:
				continue // parameters, summary...
			}
			var op struct {
				Security *[]map[string][]string `json:"security"`
			}
			require.NoError(t, json.Unmarshal(raw, &op))
			ops[strings.ToUpper(method)+" "+path] = op.Security == nil || len(*op.Security) > 0
		}
	}
	return ops
}

// newRoutedServer builds a Server on a real SQLite store in a temp dir.
func newRoutedServer(t *testing.T) *Server {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	s, err := newServer(Options{
		Store:        db,
		Canvases:     canvas.NewService(canvas.Options{Store: db}),
		Environments: env.NewService(env.Options{Store: db, Canvases: db, Changes: db}),
		Auth:         NewAuthenticator(AuthOptions{Store: db, Changes: db}),
	})
	require.NoError(t, err)
	return s
}

// documentPath returns the path of openapi.json that a route pattern's
// path serves: without {$}, and {name} for {name...}.
func documentPath(pattern string) string {
	return strings.ReplaceAll(strings.TrimSuffix(pattern, "{$}"), "...}", "}")
}

// TestServer_Routes checks that the routes and the OpenAPI document list the
// same operations, so that neither can drift from the other.
func TestServer_Routes(t *testing.T) {
	s := newRoutedServer(t)
	ops := documentOperations(t)

	routed := map[string]bool{}
	for _, p := range s.patterns {
		method, path, ok := strings.Cut(p, " ")
		require.True(t, ok, "pattern %q names its method", p)
		// {$} only anchors a pattern at its trailing slash, and {name...}
		// lets a parameter hold slashes; the document's path is the same
		// path with neither.
		routed[method+" "+documentPath(path)] = true
	}

	t.Run("EveryRouteDocumented", func(t *testing.T) {
		for _, op := range sortedKeys(routed) {
			_, ok := ops[op]
			assert.True(t, ok, "route %q is not in openapi.json", op)
		}
	})
	t.Run("EveryOperationRouted", func(t *testing.T) {
		for _, op := range sortedKeys(ops) {
			assert.True(t, routed[op], "openapi.json operation %q has no route", op)
		}
	})
	t.Run("SecurityMatchesAuthentication", func(t *testing.T) {
		h := s.middleware(s.mux)
		for _, op := range sortedKeys(ops) {
			if !routed[op] {
				continue
			}
			method, path, _ := strings.Cut(op, " ")
			path = strings.ReplaceAll(path, "{id}", "6f1c2a3e-7d5b-4c8a-9e0f-1a2b3c4d5e6f")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
			if ops[op] {
				assert.Equal(t, http.StatusUnauthorized, w.Code, "%s is documented as needing a token", op)
			} else {
				assert.NotEqual(t, http.StatusUnauthorized, w.Code, "%s is documented as public", op)
			}
		}
	})
}

// TestServer_RoutesErrorResponses checks that every operation documents the
// errors the server can answer it with, all with the Error body.
func TestServer_RoutesErrorResponses(t *testing.T) {
	type operation struct {
		Security    *[]map[string][]string `json:"security"`
		RequestBody *json.RawMessage       `json:"requestBody"`
		Responses   map[string]struct {
			Ref string `json:"$ref"`
		} `json:"responses"`
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Responses map[string]struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"responses"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openAPIDocument, &doc))

	for name, r := range doc.Components.Responses {
		assert.Equal(t, "#/components/schemas/Error", r.Content["application/json"].Schema.Ref, "response %s has the Error body", name)
	}
	for path, item := range doc.Paths {
		for method, raw := range item {
			if method == "parameters" {
				continue
			}
			var op operation
			require.NoError(t, json.Unmarshal(raw, &op))
			where := strings.ToUpper(method) + " " + path
			want := []string{"431", "500"}
			if op.Security == nil {
				want = append(want, "401", "403", "404", "422")
			}
			if op.RequestBody != nil {
				want = append(want, "400", "413", "422")
			}
			for _, code := range want {
				r, ok := op.Responses[code]
				if assert.True(t, ok, "%s documents %s", where, code) {
					assert.True(t, strings.HasPrefix(r.Ref, "#/components/responses/"), "%s %s is a shared error response", where, code)
				}
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
