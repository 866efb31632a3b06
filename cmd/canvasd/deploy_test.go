package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The systemd unit (deploy/canvasd.service) passes systemd-analyze verify,
// with its ExecStart pointed at a freshly built canvasd, and keeps the
// hardening the README promises. Without systemd-analyze the test skips,
// or fails under CI=true (.ci/run installs it).
func TestSystemdUnit_Verifies(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "canvasd.service"))
	require.NoError(t, err)
	unit := string(raw)
	for _, option := range []string{"DynamicUser=yes", "StateDirectory=canvasd", "ProtectSystem=strict",
		"NoNewPrivileges=yes", "ExecStart=/usr/local/bin/canvasd serve --data /var/lib/canvasd"} {
		assert.Contains(t, unit, option)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("systemd-analyze is missing: apt-get install systemd")
		}
		t.Skip("systemd-analyze is missing")
	}
	bin := buildCanvasd(t)
	path := filepath.Join(t.TempDir(), "canvasd.service")
	require.NoError(t, os.WriteFile(path, []byte(strings.ReplaceAll(unit, "/usr/local/bin/canvasd", bin)), 0o644))
	out, err := exec.CommandContext(t.Context(), analyze, "verify", path).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Empty(t, strings.TrimSpace(string(out)), "systemd-analyze verify warns")
}
