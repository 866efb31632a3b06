package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfig_Limits(t *testing.T) {
	t.Parallel()
	t.Run("Defaults", func(t *testing.T) {
		c, err := parseServe(nil)
		require.NoError(t, err)
		assert.Equal(t, defaultMaxConnections, c.MaxConnections)
		assert.Equal(t, int64(defaultMinBodyRate), c.MinBodyRate)
		assert.Equal(t, defaultBodyGrace, c.BodyGrace)
		assert.Equal(t, server.DefaultLimits, c.Limits)
	})
	t.Run("Env", func(t *testing.T) {
		c, err := parseServe(map[string]string{
			"CANVAS_MAX_CONNECTIONS": "10", "CANVAS_MIN_BODY_RATE": "0", "CANVAS_BODY_GRACE": "3s",
			"CANVAS_RATE_PER_KEY": "2.5", "CANVAS_RATE_BURST": "5", "CANVAS_FAILED_AUTH_RATE": "0",
			"CANVAS_FAILED_AUTH_BURST": "7", "CANVAS_MAX_QUEUED_PER_WORKSPACE": "9",
			"CANVAS_MAX_QUEUE_DELAY": "750ms",
		})
		require.NoError(t, err)
		assert.Equal(t, 10, c.MaxConnections)
		assert.Equal(t, int64(0), c.MinBodyRate)
		assert.Equal(t, 3*time.Second, c.BodyGrace)
		assert.Equal(t, server.Limits{PerKey: 2.5, PerKeyBurst: 5, FailedAuthPerAddr: 0, FailedAuthBurst: 7,
			MaxQueuedPerWorkspace: 9, MaxQueueDelay: 750 * time.Millisecond}, c.Limits)
	})
	t.Run("FlagBeatsEnv", func(t *testing.T) {
		c, err := parseServe(map[string]string{"CANVAS_MAX_CONNECTIONS": "10", "CANVAS_RATE_PER_KEY": "3"},
			"--max-connections", "20", "--rate-per-key", "4", "--min-body-rate", "50", "--body-grace", "1s")
		require.NoError(t, err)
		assert.Equal(t, 20, c.MaxConnections)
		assert.Equal(t, 4.0, c.Limits.PerKey)
		assert.Equal(t, int64(50), c.MinBodyRate)
		assert.Equal(t, time.Second, c.BodyGrace)
	})
	for name, vars := range map[string]map[string]string{
		"MaxConnections": {"CANVAS_MAX_CONNECTIONS": "-1"},
		"MinBodyRate":    {"CANVAS_MIN_BODY_RATE": "fast"},
		"BodyGrace":      {"CANVAS_BODY_GRACE": "0s"},
		"RatePerKey":     {"CANVAS_RATE_PER_KEY": "-2"},
		"Burst":          {"CANVAS_RATE_BURST": "x"},
		"QueueDelay":     {"CANVAS_MAX_QUEUE_DELAY": "-1s"},
	} {
		t.Run("Bad"+name, func(t *testing.T) {
			_, err := parseServe(vars)
			assert.Error(t, err)
		})
	}
}

// TestServe_SlowBody shows that canvasd cuts off a request body that
// trickles in at a byte at a time, with small configured limits, long
// before the body would have ended.
func TestServe_SlowBody(t *testing.T) {
	t.Parallel()
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(),
		"--min-body-rate", "100", "--body-grace", "300ms"}, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
	conn, err := net.Dial("tcp", d.URL[len("http://"):])
	require.NoError(t, err)
	defer conn.Close()
	const size = 400 // 40 s at the pace below
	_, err = fmt.Fprintf(conn, "POST /projects HTTP/1.1\r\nHost: canvasd\r\nAuthorization: Bearer %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", key, size)
	require.NoError(t, err)
	var sent atomic.Int64
	go func() {
		for range size {
			if _, err := conn.Write([]byte{' '}); err != nil {
				return
			}
			sent.Add(1)
			time.Sleep(100 * time.Millisecond)
		}
	}()
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(waitLimit)))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Less(t, sent.Load(), int64(size), "cut off before the client had sent it all")
}

// TestServe_LargeUpload shows that the body limits leave a large upload at
// a normal pace alone: 24 MiB through the upload URL.
func TestServe_LargeUpload(t *testing.T) {
	t.Parallel()
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(),
		"--min-body-rate", "1024", "--body-grace", "2s"}, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
	status, up := d.postJSON(t, "/v3/files", key, map[string]any{"fileName": "big.bin"},
		"x-compatibility-date", "2025-01-01")
	require.Equal(t, http.StatusCreated, status, "%v", up)
	const size = 24 << 20
	req, err := http.NewRequest(http.MethodPut, up["uploadUrl"].(string), io.LimitReader(patterned{}, size))
	require.NoError(t, err)
	req.ContentLength = size
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	got, meta := d.sendJSON(t, http.MethodGet, "/v3/files/"+up["id"].(string), key, nil, "x-compatibility-date", "2025-01-01")
	require.Equal(t, http.StatusOK, got)
	assert.Equal(t, float64(size), meta["size"])
	assert.Equal(t, "uploaded", meta["status"])
}

// TestServe_MaxConnections shows that canvasd holds no more connections
// than --max-connections: a second client is served only once the first
// one's connection is closed.
func TestServe_MaxConnections(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--max-connections", "1"}, nil)
	first, err := net.Dial("tcp", d.URL[len("http://"):])
	require.NoError(t, err)
	defer first.Close()
	_, err = io.WriteString(first, "GET /healthz HTTP/1.1\r\nHost: canvasd\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(first), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the first connection is served and kept open")

	second := make(chan int, 1)
	go func() {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Get(d.URL + "/healthz")
		if err != nil {
			second <- 0
			return
		}
		resp.Body.Close()
		second <- resp.StatusCode
	}()
	select {
	case status := <-second:
		t.Fatalf("a second connection was served (%d) while the first one held the only slot", status)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, first.Close())
	select {
	case status := <-second:
		assert.Equal(t, http.StatusOK, status, "served once the slot is free")
	case <-time.After(waitLimit):
		t.Fatal("the second client was never served")
	}
}

// TestServe_RateLimited shows the per-key limit through canvasd's flags.
func TestServe_RateLimited(t *testing.T) {
	t.Parallel()
	key := uuid.NewString()
	d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(),
		"--rate-per-key", "0.0001", "--rate-burst", "2"}, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
	for range 2 {
		require.Equal(t, http.StatusOK, d.get(t, "/projects", key))
	}
	req, err := http.NewRequest(http.MethodGet, d.URL+"/projects", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	assert.Positive(t, secs)
}

// patterned is an endless reader of a repeating byte pattern.
type patterned struct{}

func (patterned) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i)
	}
	return len(p), nil
}
