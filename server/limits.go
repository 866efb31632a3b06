package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// DefaultMaxHeaderBytes bounds a request's header block unless Options says
// otherwise. It sits well below net/http's default limit (1 MiB), so that
// the requests between the two get the JSON error body.
const DefaultMaxHeaderBytes = 64 << 10

// headerBytes returns the size of r's request line and header block as
// they were sent, give or take the spacing net/http does not keep.
func headerBytes(r *http.Request) int {
	n := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto) + 2
	n += len("Host: ") + len(r.Host) + 2
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + 2 + len(v) + 2
		}
	}
	return n + 2
}

// headersTooLarge answers 431 HEADERS_TOO_LARGE with the error body when
// r's header block is over the server's limit, and reports whether it did.
// net/http answers a block over its own, larger, limit before any handler
// runs, in plain text, and nothing can change that answer.
func (s *Server) headersTooLarge(w http.ResponseWriter, r *http.Request) bool {
	if headerBytes(r) <= s.maxHeader {
		return false
	}
	w.Header().Set("Connection", "close")
	s.writeError(w, r, canvas.Errorf(canvas.EHEADERSTOOLARGE,
		"The request's headers are larger than %d bytes.", s.maxHeader))
	return true
}
