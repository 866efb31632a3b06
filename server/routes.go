package server

import (
	"net/http"
	"slices"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// addPattern records a registered route pattern ("METHOD /path"). A path
// without wildcards also records its method in s.literal, so that a request
// for that exact path with another method is 405 even when a wildcard route
// of that method would match it (DELETE /environment/publish is not
// DELETE /environment/{id} with the id "publish").
func (s *Server) addPattern(pattern string) {
	s.patterns = append(s.patterns, pattern)
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || strings.Contains(path, "{") {
		return
	}
	if s.literal == nil {
		s.literal = map[string][]string{}
	}
	methods := append(s.literal[path], method)
	if method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	slices.Sort(methods)
	s.literal[path] = slices.Compact(methods)
}

// literalMismatch answers 405 with the path's Allow when r names a path
// registered without wildcards under other methods only, and reports
// whether it did.
func (s *Server) literalMismatch(w http.ResponseWriter, r *http.Request) bool {
	methods, ok := s.literal[r.URL.Path]
	if !ok || slices.Contains(methods, r.Method) {
		return false
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	s.writeError(w, r, canvas.Errorf(canvas.EMETHODNOTALLOWED, "Method %s is not allowed on %s.", r.Method, r.URL.Path))
	return true
}
