package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the whole example and checks its report exactly: the
// report holds no ids or times, so it is the same on every run.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `canvas "Greeter" in project "Support", workspace "default"
version 1 "Formal": Greet {{name}} formally.
version 2 "Friendly": Say hi to {{name}}.
production history (1):
  Formal   versionIndex=1 isActive=true
staging history (1):
  Friendly versionIndex=2 isActive=true
promoted version 2
production history (2):
  Friendly versionIndex=2 isActive=true
  Formal   versionIndex=1 isActive=false
production serves version 2 "Friendly" (promoted=true): Say hi to {{name}}.
`, out.String())
}
