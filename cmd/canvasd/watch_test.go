package main

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/client"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServe_ShutdownEndsWatches stops canvasd while a watch stream is open:
// the stream ends and the shutdown does not wait for it.
func TestServe_ShutdownEndsWatches(t *testing.T) {
	t.Parallel()
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
		map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
	ctx := context.Background()
	c, err := client.New(d.URL, client.Options{Token: key})
	require.NoError(t, err)
	p, err := c.CreateProject(ctx, "support")
	require.NoError(t, err)
	cv, err := c.CreateCanvas(ctx, wire.CreateCanvasParams{Title: "Greeter", ProjectID: &p.ID})
	require.NoError(t, err)

	req, err := http.NewRequest("GET", d.URL+"/environment/watch?resourceType=prompt&resourceId="+cv.ID+"&envName=production", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, d.stop())
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "the stream ended cleanly")
	assert.Contains(t, string(body), "event: gone", "the stream had sent the environment's state")
	assert.NotContains(t, d.Stderr.String(), "outlived the shutdown timeout")
}
