package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfig_LogFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		vars       map[string]string
		args       []string
		wantLevel  slog.Level
		wantFormat string
		wantErr    bool
	}{
		{name: "Defaults", wantLevel: slog.LevelInfo, wantFormat: "json"},
		{name: "Env", vars: map[string]string{"CANVAS_LOG_LEVEL": "debug", "CANVAS_LOG_FORMAT": "text"},
			wantLevel: slog.LevelDebug, wantFormat: "text"},
		{name: "FlagBeatsEnv", vars: map[string]string{"CANVAS_LOG_LEVEL": "debug", "CANVAS_LOG_FORMAT": "text"},
			args: []string{"--log-level", "error", "--log-format", "json"}, wantLevel: slog.LevelError, wantFormat: "json"},
		{name: "Warn", args: []string{"--log-level", "WARN"}, wantLevel: slog.LevelWarn, wantFormat: "json"},
		{name: "BadLevelEnv", vars: map[string]string{"CANVAS_LOG_LEVEL": "loud"}, wantErr: true},
		{name: "BadLevelFlag", args: []string{"--log-level", "loud"}, wantErr: true},
		{name: "BadFormatEnv", vars: map[string]string{"CANVAS_LOG_FORMAT": "xml"}, wantErr: true},
		{name: "BadFormatFlag", args: []string{"--log-format", "xml"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := parseServe(tc.vars, tc.args...)
			if tc.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.wantLevel, c.LogLevel)
			assert.Equal(t, tc.wantFormat, c.LogFormat)
		})
	}
}

func TestRun_ServeLogs(t *testing.T) {
	t.Parallel()

	t.Run("DebugText", func(t *testing.T) {
		t.Parallel()
		key := uuid.NewString()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--log-level", "debug",
			"--log-format", "text"}, map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
		require.NoError(t, d.stop())
		logs := d.Stderr.String()
		assert.Contains(t, logs, "level=DEBUG msg=request")
		assert.Contains(t, logs, "path=/projects")
		assert.NotContains(t, logs, `{"time"`, "text, not JSON")
	})

	t.Run("InfoOmitsRequests", func(t *testing.T) {
		t.Parallel()
		key := uuid.NewString()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()},
			map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
		require.NoError(t, d.stop())
		logs := d.Stderr.String()
		assert.Contains(t, logs, `"msg":"listening"`)
		assert.False(t, strings.Contains(logs, `"msg":"request"`), "no request lines at info: %s", logs)
	})
}

func TestConfig_SideFlags(t *testing.T) {
	t.Parallel()
	c, err := parseServe(map[string]string{"CANVAS_METRICS_ADDR": "127.0.0.1:9100", "CANVAS_PPROF_ADDR": "127.0.0.1:6060",
		"CANVAS_METRICS_PUBLIC": "1", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"})
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9100", c.MetricsAddr)
	assert.Equal(t, "127.0.0.1:6060", c.PprofAddr)
	assert.True(t, c.MetricsPublic)
	assert.Equal(t, "http://127.0.0.1:4318", c.OTLPEndpoint)

	c, err = parseServe(map[string]string{"CANVAS_METRICS_PUBLIC": "1"}, "--metrics-public=false",
		"--metrics-addr", "127.0.0.1:0", "--otlp-endpoint", "http://127.0.0.1:4319/v1/traces")
	require.NoError(t, err)
	assert.False(t, c.MetricsPublic, "the flag wins")
	assert.Equal(t, "127.0.0.1:0", c.MetricsAddr)
	assert.Equal(t, "http://127.0.0.1:4319/v1/traces", c.OTLPEndpoint)

	c, err = parseServe(nil)
	require.NoError(t, err)
	assert.Empty(t, c.MetricsAddr, "no metrics listener by default")
	assert.Empty(t, c.PprofAddr)
	assert.Empty(t, c.OTLPEndpoint, "no exporter by default")

	_, err = parseServe(map[string]string{"CANVAS_METRICS_PUBLIC": "maybe"})
	assert.Error(t, err)
}

// fetch GETs url with token as the bearer (none when empty) and returns the
// status and body.
func fetch(t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

func TestRun_ServeMetrics(t *testing.T) {
	t.Parallel()

	t.Run("SeparateListener", func(t *testing.T) {
		t.Parallel()
		key := uuid.NewString()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--metrics-addr", "127.0.0.1:0"},
			map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
		addr, ok := d.Stdout.line("metrics listening on ")
		require.True(t, ok, "stdout: %s", d.Stdout)
		assert.Equal(t, http.StatusOK, d.get(t, "/projects", key))
		assert.Equal(t, http.StatusNotFound, d.get(t, "/metrics", key), "not on the public listener")

		status, body := fetch(t, "http://"+addr+"/metrics", "")
		require.Equal(t, http.StatusOK, status)
		assert.Contains(t, body, `canvas_http_requests_total{code="200",route="GET /projects"} 1`)
		assert.Contains(t, body, `canvas_queue_depth{lane="maintenance"}`)
		assert.Contains(t, body, "go_goroutines ")
		assert.Contains(t, body, "process_resident_memory_bytes ")
	})

	t.Run("Public", func(t *testing.T) {
		t.Parallel()
		key := uuid.NewString()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--metrics-public"},
			map[string]string{"CANVAS_BOOTSTRAP_API_KEY": key})
		assert.Equal(t, http.StatusUnauthorized, d.get(t, "/metrics", ""))
		status, body := fetch(t, d.URL+"/metrics", key)
		require.Equal(t, http.StatusOK, status)
		assert.Contains(t, body, `canvas_http_requests_total{code="401",route="GET /metrics"} 1`)
	})

	t.Run("Pprof", func(t *testing.T) {
		t.Parallel()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", t.TempDir(), "--pprof", "127.0.0.1:0"}, nil)
		addr, ok := d.Stdout.line("pprof listening on ")
		require.True(t, ok, "stdout: %s", d.Stdout)
		status, body := fetch(t, "http://"+addr+"/debug/pprof/", "")
		assert.Equal(t, http.StatusOK, status)
		assert.Contains(t, body, "goroutine")
		status, _ = fetch(t, "http://"+addr+"/debug/pprof/goroutine?debug=1", "")
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, http.StatusNotFound, d.get(t, "/debug/pprof/", ""), "not on the public listener")
	})
}
