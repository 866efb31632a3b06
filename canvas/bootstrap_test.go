package canvas_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustOpen opens a fresh SQLite store in a temp dir, closed by t.Cleanup.
func mustOpen(tb testing.TB) *sqlite.DB {
	tb.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "canvas.db"))
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestBootstrap(t *testing.T) {
	ctx := context.Background()

	t.Run("OK", func(t *testing.T) {
		db := mustOpen(t)
		created, token, err := canvas.Bootstrap(ctx, db, "")
		require.NoError(t, err)
		require.True(t, created)
		assert.True(t, canvas.IsAPIKeyToken(token), "token %q is a UUID", token)

		ws, err := db.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
		require.NoError(t, err)
		key, err := db.GetAPIKeyByHash(ctx, canvas.HashToken(token))
		require.NoError(t, err)
		assert.Equal(t, ws.ID, key.WorkspaceID)
		assert.Equal(t, canvas.RoleAdmin, key.Role)
		assert.Nil(t, key.Projects)
		assert.Nil(t, key.RevokedAt)
	})

	t.Run("GivenToken", func(t *testing.T) {
		db := mustOpen(t)
		given := strings.ToUpper(uuid.NewString())
		created, token, err := canvas.Bootstrap(ctx, db, given)
		require.NoError(t, err)
		require.True(t, created)
		assert.Equal(t, strings.ToLower(given), token)
		key, err := db.GetAPIKeyByHash(ctx, canvas.HashToken(given))
		require.NoError(t, err)
		assert.Equal(t, canvas.RoleAdmin, key.Role)
	})

	t.Run("InvalidToken", func(t *testing.T) {
		db := mustOpen(t)
		created, token, err := canvas.Bootstrap(ctx, db, "not-a-uuid")
		assert.Equal(t, canvas.EINVALID, canvas.ErrorCode(err))
		assert.False(t, created)
		assert.Empty(t, token)
		all, err := db.ListWorkspaces(ctx)
		require.NoError(t, err)
		assert.Empty(t, all, "nothing is created")
	})

	t.Run("AlreadyBootstrapped", func(t *testing.T) {
		db := mustOpen(t)
		_, first, err := canvas.Bootstrap(ctx, db, "")
		require.NoError(t, err)
		created, token, err := canvas.Bootstrap(ctx, db, uuid.NewString())
		require.NoError(t, err)
		assert.False(t, created)
		assert.Empty(t, token)
		keys, err := db.ListAPIKeys(ctx, "")
		require.NoError(t, err)
		require.Len(t, keys, 1)
		assert.Equal(t, canvas.HashToken(first), keys[0].Hash)
	})

	t.Run("OtherWorkspaceExists", func(t *testing.T) {
		db := mustOpen(t)
		require.NoError(t, db.CreateWorkspace(ctx, &canvas.Workspace{Name: "team"}))
		created, token, err := canvas.Bootstrap(ctx, db, "")
		require.NoError(t, err)
		assert.False(t, created)
		assert.Empty(t, token)
		_, err = db.GetWorkspaceByName(ctx, canvas.DefaultWorkspaceName)
		assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(err))
	})

	t.Run("Concurrent", func(t *testing.T) {
		db := mustOpen(t)
		const n = 4
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
		)
		for range n {
			wg.Go(func() {
				ok, _, err := canvas.Bootstrap(ctx, db, "")
				assert.NoError(t, err)
				if ok {
					mu.Lock()
					created++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		assert.Equal(t, 1, created, "exactly one bootstrap creates")
		all, err := db.ListWorkspaces(ctx)
		require.NoError(t, err)
		assert.Len(t, all, 1)
		keys, err := db.ListAPIKeys(ctx, "")
		require.NoError(t, err)
		assert.Len(t, keys, 1)
	})
}
