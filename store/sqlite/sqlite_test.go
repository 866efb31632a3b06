package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/store/storetest"
	"github.com/stretchr/testify/require"
)

func TestDB_Store(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "canvas.db"))
		require.NoError(t, err)
		t.Cleanup(func() { db.Close() })
		return db
	})
}
