package main

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun_Generations checks the wiring of test case runs: the generation
// service is mounted and its jobs run on the daemon's one worker.
func TestRun_Generations(t *testing.T) {
	t.Parallel()
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
	status, project := d.postJSON(t, "/projects", key, map[string]any{"name": "p"})
	require.Equal(t, http.StatusCreated, status)
	status, c := d.postJSON(t, "/prompt", key, map[string]any{"title": "c", "projectId": project["id"]})
	require.Equal(t, http.StatusCreated, status)
	status, v := d.postJSON(t, "/prompt-version", key, map[string]any{"promptId": c["id"],
		"configuration": map[string]any{"model": "echo"}, "message": map[string]any{"role": "system", "content": "Hi {{who}}"}})
	require.Equal(t, http.StatusCreated, status)
	status, tc := d.postJSON(t, "/test-case", key, map[string]any{"promptId": c["id"], "title": "greets",
		"variables": map[string]any{"who": "Ada"}, "expectedOutput": "Hi Ada"})
	require.Equal(t, http.StatusCreated, status, "%v", tc)

	status, res := d.postJSON(t, "/test-case/"+tc["id"].(string)+"/run", key, map[string]any{"promptVersionId": v["id"]})
	require.Equal(t, http.StatusOK, status, "%v", res)
	var g map[string]any
	require.Eventually(t, func() bool {
		req, err := http.NewRequest(http.MethodGet, d.URL+"/test-case/generations/"+res["generationId"].(string), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&g))
		return g["status"] == "completed"
	}, waitLimit, 10*time.Millisecond)
	assert.Equal(t, "Hi Ada", g["output"])
	assert.Equal(t, true, g["passed"])
	require.NoError(t, d.stop())
}
