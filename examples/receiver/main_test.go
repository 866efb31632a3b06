package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestRun sends the receiver one notification and checks that it prints
// it whole and stops, as -n 1 asks.
func TestRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(context.Background(), ln, 1, &out) }()

	// A GET says the receiver listens, and does not count.
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	req, err := http.NewRequest("POST", "http://"+ln.Addr().String()+"/hook",
		strings.NewReader(`{"type":"completion.succeeded","data":{"status":"completed"}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Tenant", "acme")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	require.NoError(t, <-done)

	text := out.String()
	assert.Contains(t, text, "receiver listening on http://"+ln.Addr().String()+"\n")
	assert.NotContains(t, text, "GET")
	assert.Contains(t, text, "POST /hook\n")
	assert.Contains(t, text, "content-type: application/json\n")
	assert.Contains(t, text, "tenant: acme\n")
	assert.Contains(t, text, `{
  "type": "completion.succeeded",
  "data": {
    "status": "completed"
  }
}`)
}
