package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun runs the whole example and checks its report exactly: the report
// holds no ids or times, so it is the same on every run.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), &out))
	assert.Equal(t, `canvas "Capitals": 4 test cases, 2 tagged smoke, 4 tagged regression
version 1 "Sentence": 4/4 passed, pass rate 100%
  France  exact    completed passed=true  output="The capital is Paris."
  Japan   exact    completed passed=true  output="The capital is Tokyo."
  Peru    contains completed passed=true  output="The capital is Lima."
  Kenya   regex    completed passed=true  output="The capital is Nairobi."
version 2 "Terse": 1/4 passed, pass rate 25%
  France  exact    completed passed=false output="Capital: Paris"
  Japan   exact    completed passed=false output="Capital: Tokyo"
  Peru    contains completed passed=true  output="Capital: Lima"
  Kenya   regex    completed passed=false output="Capital: Nairobi"
`, out.String())
}
