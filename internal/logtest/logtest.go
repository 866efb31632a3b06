// Package logtest collects the JSON records of a slog logger for tests.
package logtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Buffer is the writer of a slog.JSONHandler whose records a test reads
// back; it is safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Records returns the records logged so far whose msg is msg.
func (b *Buffer) Records(t testing.TB, msg string) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var got []map[string]any
	lines := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		if len(bytes.TrimSpace(lines.Bytes())) == 0 {
			continue
		}
		var rec map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &rec), "%s", lines.Bytes())
		if rec["msg"] == msg {
			got = append(got, rec)
		}
	}
	return got
}
