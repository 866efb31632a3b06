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
	assert.Equal(t, `chunk 1: "Explain"
chunk 2: " group"
chunk 3: " commit"
chunk 4: " in"
chunk 5: " one"
chunk 6: " line."
chunk 7: "\nKeep"
chunk 8: " it"
chunk 9: " short."
status: completed, model: echo, tokens in/out: 9/9
recorded: completed
Explain group commit in one line.
Keep it short.
`, out.String())
}
