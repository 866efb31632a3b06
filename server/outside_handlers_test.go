package server_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/server"
)

// TestErrorsOutsideHandlers_HeadersTooLarge checks that a header block over
// the server's limit gets the JSON error body, 431 HEADERS_TOO_LARGE,
// before authentication and routing, instead of net/http's plain text.
func TestErrorsOutsideHandlers_HeadersTooLarge(t *testing.T) {
	e := newTestEnv(t)
	pad := strings.Repeat("x", server.DefaultMaxHeaderBytes)
	r := e.Do(http.MethodGet, "/projects", e.Viewer, nil, "X-Pad", pad)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.Status, "%s", r.Body)
	assert.Equal(t, canvas.EHEADERSTOOLARGE, r.Code(t))

	r = e.Do(http.MethodGet, "/projects", "", nil, "X-Pad", pad)
	assert.Equal(t, http.StatusRequestHeaderFieldsTooLarge, r.Status, "before authentication")

	r = e.Do(http.MethodGet, "/projects", e.Viewer, nil, "X-Pad", pad[:server.DefaultMaxHeaderBytes-1024])
	assert.Equal(t, http.StatusOK, r.Status, "under the limit: %s", r.Body)
}

// TestErrorsOutsideHandlers_Mux checks that what the ServeMux decides, no
// route for the path or none for the method, is the JSON error body.
func TestErrorsOutsideHandlers_Mux(t *testing.T) {
	e := newTestEnv(t)
	r := e.Do(http.MethodGet, "/nowhere", e.Viewer, nil)
	require.Equal(t, http.StatusNotFound, r.Status)
	assert.Equal(t, canvas.ENOTFOUND, r.Code(t))
	r = e.Do(http.MethodPut, "/projects", e.Viewer, nil)
	require.Equal(t, http.StatusMethodNotAllowed, r.Status)
	assert.Equal(t, canvas.EMETHODNOTALLOWED, r.Code(t))
	assert.Equal(t, "GET, HEAD, POST", r.Header.Get("Allow"))
}

// TestErrorsOutsideHandlers_NetHTTP records what net/http answers by itself,
// before any handler runs, and so cannot be the JSON error body: these are
// the cases docs/security.md lists under "Errors outside handlers". If
// net/http starts handing any of them to the handler, this test fails and
// the document must change with it.
func TestErrorsOutsideHandlers_NetHTTP(t *testing.T) {
	e := newTestEnv(t)
	addr := strings.TrimPrefix(e.URL, "http://")
	for _, tt := range []struct {
		name, request string
		status        int
	}{
		{"ControlByteInHeader", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n", http.StatusBadRequest},
		{"MalformedRequestLine", "GET\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"MissingHost", "GET /healthz HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		{"UnknownTransferEncoding", "POST /projects HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented},
		{"OverNetHTTPLimit", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("x", http.DefaultMaxHeaderBytes+8192) + "\r\n\r\n",
			http.StatusRequestHeaderFieldsTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)))
			go func() { _, _ = conn.Write([]byte(tt.request)) }()
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
			assert.Empty(t, resp.Header.Get("X-Request-Id"), "no handler ran")
		})
	}
}
