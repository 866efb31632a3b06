package main

import (
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
