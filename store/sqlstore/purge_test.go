package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

func TestPurge_UsesEndedIndexesOnSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "canvas.db")
	db, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(ON)")
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	for q, index := range sqlstore.PurgeIndexes() {
		rows, err := conn.QueryContext(ctx, `EXPLAIN QUERY PLAN `+q, "2030-01-01T00:00:00.000000000Z", 500)
		var plan []string
		for err == nil && rows.Next() {
			var id, parent, notUsed int
			var detail string
			require.NoError(t, rows.Scan(&id, &parent, &notUsed, &detail))
			plan = append(plan, detail)
		}
		require.NoError(t, err)
		require.NoError(t, rows.Err())
		rows.Close()
		joined := strings.Join(plan, "\n")
		assert.Contains(t, joined, "USING INDEX "+index, "plan of %s", q)
		assert.NotContains(t, joined, "TEMP B-TREE", "the index gives the order: %s", q)
	}
}
