package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the example and checks its report exactly: echo is
// deterministic and the report holds no ids or times.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `upload URL issued: true
file: notes.txt, text/plain, 54 bytes, uploaded
sha256: 911acc230d81a46768cd8a58ee70882e7a16c7ced8c3d554d3e5217ace568264
answer:
Summarize this:
[file name=notes.txt type=text/plain size=54]
Group commit batches many transactions into one fsync.
`, out.String())
}
