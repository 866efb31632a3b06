package freshcache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/promptcanvas/promptcanvas/internal/freshcache"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// versioner is a data version the test moves by hand; err, when set, is
// what DataVersion fails with.
type versioner struct {
	version atomic.Int64
	err     error
}

func (v *versioner) DataVersion(context.Context) (int64, error) {
	return v.version.Load(), v.err
}

// counter builds values "key@n", n counting the builds of the test.
type counter struct{ n atomic.Int64 }

func (c *counter) build(key string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		return fmt.Sprintf("%s@%d", key, c.n.Add(1)), nil
	}
}

func mustGet(t *testing.T, c *freshcache.Cache[string, string], key string, b *counter) string {
	t.Helper()
	v, err := c.Get(context.Background(), key, b.build(key))
	require.NoError(t, err)
	return v
}

func TestCache_Get(t *testing.T) {
	t.Run("ServedWhileVersionUnchanged", func(t *testing.T) {
		src, b := &versioner{}, &counter{}
		c := freshcache.New[string, string](src, 8)
		assert.Equal(t, "a@1", mustGet(t, c, "a", b))
		assert.Equal(t, "a@1", mustGet(t, c, "a", b))
		assert.Equal(t, "b@2", mustGet(t, c, "b", b))
		assert.Equal(t, "a@1", mustGet(t, c, "a", b))
		assert.EqualValues(t, 2, b.n.Load())
	})

	t.Run("AnyVersionChangeRebuildsEveryEntry", func(t *testing.T) {
		src, b := &versioner{}, &counter{}
		c := freshcache.New[string, string](src, 8)
		mustGet(t, c, "a", b)
		mustGet(t, c, "b", b)
		src.version.Add(1)
		assert.Equal(t, "a@3", mustGet(t, c, "a", b))
		assert.Equal(t, "b@4", mustGet(t, c, "b", b))
		assert.Equal(t, "a@3", mustGet(t, c, "a", b))
	})

	t.Run("TaggedWithVersionReadBeforeBuild", func(t *testing.T) {
		src := &versioner{}
		c := freshcache.New[string, string](src, 8)
		// A commit lands while the value is being built: the value is
		// tagged with the earlier version, so it is not served afterwards.
		v, err := c.Get(context.Background(), "a", func(context.Context) (string, error) {
			src.version.Add(1)
			return "during", nil
		})
		require.NoError(t, err)
		assert.Equal(t, "during", v)
		v, err = c.Get(context.Background(), "a", func(context.Context) (string, error) { return "after", nil })
		require.NoError(t, err)
		assert.Equal(t, "after", v)
	})

	t.Run("ErrorsNotCached", func(t *testing.T) {
		src, b := &versioner{}, &counter{}
		c := freshcache.New[string, string](src, 8)
		boom := errors.New("boom")
		_, err := c.Get(context.Background(), "a", func(context.Context) (string, error) { return "", boom })
		assert.ErrorIs(t, err, boom)
		assert.Equal(t, "a@1", mustGet(t, c, "a", b))
		assert.Equal(t, 1, c.Len())
	})

	t.Run("VersionErrorBypassesCache", func(t *testing.T) {
		src, b := &versioner{err: errors.New("closed")}, &counter{}
		c := freshcache.New[string, string](src, 8)
		assert.Equal(t, "a@1", mustGet(t, c, "a", b))
		assert.Equal(t, "a@2", mustGet(t, c, "a", b))
		assert.Equal(t, 0, c.Len())
	})

	t.Run("NilCachesNothing", func(t *testing.T) {
		c := freshcache.New[string, string](nil, 8)
		require.Nil(t, c)
		b := &counter{}
		assert.Equal(t, "a@1", mustGet(t, c, "a", b))
		assert.Equal(t, "a@2", mustGet(t, c, "a", b))
		assert.Equal(t, 0, c.Len())
	})

	t.Run("Bounded", func(t *testing.T) {
		src, b := &versioner{}, &counter{}
		c := freshcache.New[string, string](src, 4)
		for i := range 20 {
			mustGet(t, c, fmt.Sprint("k", i), b)
			assert.LessOrEqual(t, c.Len(), 4)
		}
		assert.Equal(t, 4, c.Len())
		// The last key is always kept, and still served.
		built := b.n.Load()
		assert.Equal(t, fmt.Sprintf("k19@%d", built), mustGet(t, c, "k19", b))
		assert.Equal(t, built, b.n.Load())
	})

	t.Run("StaleEntriesEvictedFirst", func(t *testing.T) {
		src, b := &versioner{}, &counter{}
		c := freshcache.New[string, string](src, 2)
		mustGet(t, c, "a", b)
		src.version.Add(1)
		mustGet(t, c, "b", b)
		mustGet(t, c, "c", b) // full: a (stale) goes, b stays
		built := b.n.Load()
		assert.Equal(t, fmt.Sprintf("b@%d", built-1), mustGet(t, c, "b", b))
		assert.Equal(t, built, b.n.Load())
	})

	t.Run("Concurrent", func(t *testing.T) {
		src, b := &versioner{}, &counter{}
		c := freshcache.New[string, string](src, 4)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 200 {
					key := fmt.Sprint("k", (g+i)%6)
					v, err := c.Get(context.Background(), key, b.build(key))
					if assert.NoError(t, err) {
						assert.Contains(t, v, key+"@")
					}
					if i%50 == 0 {
						src.version.Add(1)
					}
				}
			})
		}
		wg.Wait()
		assert.LessOrEqual(t, c.Len(), 4)
	})
}
