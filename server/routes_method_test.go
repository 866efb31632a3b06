package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// TestServer_LiteralPathWrongMethod walks the server's route list and sends
// every path registered without wildcards with every method it is not
// registered for: each answer is 405 with the path's Allow and the error
// body, never a wildcard route of that method taking the literal segment
// for an id (DELETE /environment/publish, GET /test-case/bulk-add-tags).
func TestServer_LiteralPathWrongMethod(t *testing.T) {
	s := newRoutedServer(t)
	h := s.middleware(s.mux)
	allowed := map[string][]string{}
	for _, p := range s.patterns {
		method, path, _ := strings.Cut(p, " ")
		if strings.Contains(path, "{") {
			continue
		}
		allowed[path] = append(allowed[path], method)
		if method == http.MethodGet {
			allowed[path] = append(allowed[path], http.MethodHead)
		}
	}
	require.Contains(t, allowed, "/environment/publish")
	require.Contains(t, allowed, "/test-case/bulk-add-tags")

	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions}
	for _, path := range sortedKeys(allowed) {
		want := slices.Clone(allowed[path])
		slices.Sort(want)
		for _, method := range methods {
			if slices.Contains(want, method) {
				continue
			}
			t.Run(method+path, func(t *testing.T) {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
				require.Equal(t, http.StatusMethodNotAllowed, w.Code, "body: %s", w.Body)
				assert.Equal(t, strings.Join(want, ", "), w.Header().Get("Allow"))
				if method == http.MethodHead {
					return
				}
				assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
				var body struct{ Code string }
				require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
				assert.Equal(t, canvas.EMETHODNOTALLOWED, body.Code)
			})
		}
	}
}

// TestServer_AllowMatchesMux checks that the Allow of a literal path is
// written as the ServeMux writes its own, for a path no wildcard shadows.
func TestServer_AllowMatchesMux(t *testing.T) {
	s := newRoutedServer(t)
	h := s.middleware(s.mux)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPut, "/environment", nil))
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)
	probe := httptest.NewRecorder()
	s.mux.ServeHTTP(probe, httptest.NewRequest(http.MethodPut, "/environment", nil))
	assert.Equal(t, probe.Header().Get("Allow"), w.Header().Get("Allow"))
}
