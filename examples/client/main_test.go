package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the example and checks its report exactly: the published
// version is seen, and the last good one is served while the server is
// down.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `first fetch: "Say hi to {{name}}." (fresh)
after the publish: "Say hello to {{name}}, warmly." (fresh)
server down: "Say hello to {{name}}, warmly." (stale)
server back: "Say hello to {{name}}, warmly." (fresh)
`, out.String())
}
