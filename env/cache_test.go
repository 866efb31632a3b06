package env_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingStore counts the version reads the served-version cache saves;
// embedding the DB keeps its DataVersion, so the service caches over it.
type countingStore struct {
	*sqlite.DB
	versionReads atomic.Int64
}

func (s *countingStore) GetVersion(ctx context.Context, workspaceID, id string) (*canvas.Version, error) {
	s.versionReads.Add(1)
	return s.DB.GetVersion(ctx, workspaceID, id)
}

func TestService_ActiveVersionCache(t *testing.T) {
	t.Run("ReadOnceUntilACommit", func(t *testing.T) {
		f := mustFixture(t)
		v1, v2 := f.mustVersion(t, "v1", "one"), f.mustVersion(t, "v2", "two")
		f.mustPublish(t, env.Production, v1.ID)
		cs := &countingStore{DB: f.db}
		svc := env.NewService(env.Options{Store: cs, Canvases: cs, Changes: cs})
		params := env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production}

		for range 3 {
			got, err := svc.ActiveVersion(f.as(canvas.RoleViewer), params)
			require.NoError(t, err)
			assert.Equal(t, v1.ID, got.ID)
		}
		assert.EqualValues(t, 1, cs.versionReads.Load())

		f.mustPublish(t, env.Production, v2.ID)
		got, err := svc.ActiveVersion(f.as(canvas.RoleViewer), params)
		require.NoError(t, err)
		assert.Equal(t, v2.ID, got.ID)
		assert.EqualValues(t, 2, cs.versionReads.Load())
	})

	t.Run("CallersCannotCorruptIt", func(t *testing.T) {
		f := mustFixture(t)
		v1 := f.mustVersion(t, "v1", "one")
		f.mustPublish(t, env.Production, v1.ID)
		params := env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production}
		got, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), params)
		require.NoError(t, err)
		got.Title = "changed"
		got.Messages[0].Content = "changed"
		got.Message.Content = "changed"
		*got.Content = "changed"

		again, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), params)
		require.NoError(t, err)
		assert.Equal(t, "v1", again.Title)
		assert.Equal(t, "one", again.Messages[0].Content)
		assert.Equal(t, "one", again.Message.Content)
		assert.Equal(t, "one", *again.Content)
	})

	t.Run("AccessCheckedOnEveryCall", func(t *testing.T) {
		f := mustFixture(t)
		v1 := f.mustVersion(t, "v1", "one")
		f.mustPublish(t, env.Production, v1.ID)
		params := env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production}
		_, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), params)
		require.NoError(t, err)
		// Same workspace and user, so the same cache entry, but restricted
		// to another project.
		_, err = f.svc.ActiveVersion(f.as(canvas.RoleViewer, "another-project"), params)
		assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))
	})

	t.Run("NeverStaleUnderConcurrentReads", func(t *testing.T) {
		// Readers keep rebuilding and serving entries while versions are
		// published; after each publish returns, the next read must serve
		// it, whatever the readers cached in between.
		f := mustFixture(t)
		versions := []*canvas.Version{f.mustVersion(t, "v1", "one"), f.mustVersion(t, "v2", "two"), f.mustVersion(t, "v3", "three")}
		f.mustPublish(t, env.Production, versions[0].ID)
		params := env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), params)
					assert.NoError(t, err)
				}
			})
		}
		for i := range 30 {
			v := versions[(i+1)%len(versions)]
			f.mustPublish(t, env.Production, v.ID)
			got, err := f.svc.ActiveVersion(f.as(canvas.RoleViewer), params)
			require.NoError(t, err)
			assert.Equal(t, v.ID, got.ID, "publish %d", i)
			raw, err := f.svc.ActiveVersionJSON(f.as(canvas.RoleViewer), params)
			require.NoError(t, err)
			assert.Contains(t, string(raw), `"id":"`+v.ID+`"`, "publish %d", i)
		}
		close(stop)
		wg.Wait()
	})

	t.Run("DifferentStoresNotCached", func(t *testing.T) {
		f := mustFixture(t)
		v1 := f.mustVersion(t, "v1", "one")
		f.mustPublish(t, env.Production, v1.ID)
		cs := &countingStore{DB: f.db}
		svc := env.NewService(env.Options{Store: f.db, Canvases: cs}) // two stores: no one change signal, no cache
		params := env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production}
		for range 2 {
			_, err := svc.ActiveVersion(f.as(canvas.RoleViewer), params)
			require.NoError(t, err)
		}
		assert.EqualValues(t, 2, cs.versionReads.Load())
	})
}

func TestService_ActiveVersionJSON(t *testing.T) {
	f := mustFixture(t)
	v1 := f.mustVersion(t, "v1", "Answer <b>{{name}}</b> & be brief")
	v2 := f.mustVersion(t, "v2", "two")
	f.mustPublish(t, env.Production, v1.ID)
	params := env.ActiveVersionParams{CanvasID: f.canvas.ID, EnvName: env.Production}
	ctx := f.as(canvas.RoleViewer)

	want := func() []byte {
		v, err := f.svc.ActiveVersion(ctx, params)
		require.NoError(t, err)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(v))
		return buf.Bytes()
	}

	raw, err := f.svc.ActiveVersionJSON(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, string(want()), string(raw))
	assert.Contains(t, string(raw), "Answer <b>{{name}}</b> & be brief", "HTML characters are not escaped")

	clear(raw) // the caller owns its copy
	again, err := f.svc.ActiveVersionJSON(ctx, params)
	require.NoError(t, err)
	assert.Equal(t, string(want()), string(again))

	f.mustPublish(t, env.Production, v2.ID)
	raw, err = f.svc.ActiveVersionJSON(ctx, params)
	require.NoError(t, err)
	var got canvas.Version
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, v2.ID, got.ID)

	_, err = f.svc.ActiveVersionJSON(f.as(canvas.RoleViewer, "another-project"), params)
	assert.Equal(t, canvas.EFORBIDDEN, canvas.ErrorCode(err))
}
