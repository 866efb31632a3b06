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
	assert.Equal(t, `version "Draft and review": workflow=true, 7 nodes in its graph
completion answered: workflow run waiting-for-review
review: approved
run completed in environment api
  start    input      completed  {"topic":"the new espresso machine"}
  draft    llm        completed  "You write short product notes.\nWrite a note about the new espresso machine."
  check    condition  completed  {"port":"long"}
  review   review     completed  {"approved":true,"comment":"ship it"}
  publish  template   completed  "APPROVED (ship it): You write short product notes.\nWrite a note about the new espresso machine."
  expand   template   skipped    null
  result   output     completed  "APPROVED (ship it): You write short product notes.\nWrite a note about the new espresso machine."
output (result): APPROVED (ship it): You write short product notes.
Write a note about the new espresso machine.
`, out.String())
}
