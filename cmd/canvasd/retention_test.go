package main

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/retention"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRetentionConfig_Flags(t *testing.T) {
	const day = 24 * time.Hour
	parse := parseServe
	t.Run("Default", func(t *testing.T) {
		c, err := parse(nil)
		require.NoError(t, err)
		assert.Equal(t, retentionConfig{JobRetention: 7 * day, DeliveryRetention: 30 * day, RunRetention: 30 * day,
			WorkflowRunRetention: 30 * day, PurgeInterval: time.Hour}, c.retentionConfig, "runs are kept 30 days")
	})
	t.Run("Env", func(t *testing.T) {
		c, err := parse(map[string]string{"CANVAS_JOB_RETENTION": "36h", "CANVAS_DELIVERY_RETENTION": "0",
			"CANVAS_RUN_RETENTION": "90d", "CANVAS_WORKFLOW_RUN_RETENTION": "1d", "CANVAS_AUDIT_RETENTION": "365d",
			"CANVAS_PURGE_INTERVAL": "10m"})
		require.NoError(t, err)
		assert.Equal(t, retentionConfig{JobRetention: 36 * time.Hour, RunRetention: 90 * day,
			WorkflowRunRetention: day, AuditRetention: 365 * day, PurgeInterval: 10 * time.Minute}, c.retentionConfig)
	})
	t.Run("FlagBeatsEnv", func(t *testing.T) {
		c, err := parse(map[string]string{"CANVAS_JOB_RETENTION": "36h"}, "--job-retention", "2d",
			"--run-retention=12h", "--audit-retention", "90d")
		require.NoError(t, err)
		assert.Equal(t, 2*day, c.JobRetention)
		assert.Equal(t, 12*time.Hour, c.RunRetention)
		assert.Equal(t, 90*day, c.AuditRetention)
	})
	t.Run("Invalid", func(t *testing.T) {
		for name, vars := range map[string]map[string]string{
			"Word":         {"CANVAS_JOB_RETENTION": "a week"},
			"Negative":     {"CANVAS_DELIVERY_RETENTION": "-1h"},
			"NegativeDays": {"CANVAS_RUN_RETENTION": "-3d"},
			"FractionDays": {"CANVAS_WORKFLOW_RUN_RETENTION": "1.5d"},
			"AuditWord":    {"CANVAS_AUDIT_RETENTION": "a year"},
			"ZeroInterval": {"CANVAS_PURGE_INTERVAL": "0"},
		} {
			_, err := parse(vars)
			for variable := range vars {
				assert.ErrorContains(t, err, variable, name)
			}
		}
		_, err := parse(nil, "--purge-interval", "0s")
		assert.Error(t, err)
	})
}

// livePurges counts the queued and running purge jobs in the database of
// dir, read directly: the store lists no jobs.
func livePurges(t *testing.T, dir string) int {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "canvas.db")+"?mode=ro")
	require.NoError(t, err)
	defer conn.Close()
	var n int
	require.NoError(t, conn.QueryRow(`SELECT COUNT(*) FROM jobs WHERE kind = ? AND status IN ('queued', 'running')`,
		retention.JobKind).Scan(&n))
	return n
}

func TestRun_SchedulesOnePurge(t *testing.T) {
	t.Parallel()
	t.Run("AcrossRestarts", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		vars := map[string]string{"CANVAS_BOOTSTRAP_API_KEY": uuid.NewString()}
		for range 2 {
			d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir}, vars)
			require.NoError(t, d.stop())
			assert.Equal(t, 1, livePurges(t, dir), "one purge is queued, however many starts")
		}
	})
	t.Run("NothingToPurge", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		d := startDaemon(t, []string{"--addr", "127.0.0.1:0", "--data", dir, "--job-retention", "0",
			"--run-retention", "0"}, map[string]string{"CANVAS_DELIVERY_RETENTION": "0", "CANVAS_WORKFLOW_RUN_RETENTION": "0"})
		require.NoError(t, d.stop())
		assert.Zero(t, livePurges(t, dir), "every retention is zero: no purge")
	})
}
