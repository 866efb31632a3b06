package freshcache

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Cache maps keys to values built from a store, tagged with the store's
// data version. The zero of *Cache (nil) caches nothing: Get always builds,
// which is what a store without a data version gets.
//
// Values are shared by every caller that gets them: a cached value must be
// treated as read-only, or copied before it is changed.
type Cache[K comparable, V any] struct {
	source canvas.ChangeVersioner
	size   int

	mu      sync.Mutex
	entries map[K]entry[V]

	// hits and misses count the Gets served from an entry and those that
	// built, for Stats.
	hits, misses atomic.Uint64
}

type entry[V any] struct {
	version int64
	value   V
}

// New returns a cache of at most size entries (at least 1) whose entries
// are checked against source's data version. It returns nil, a cache that
// caches nothing, when source is nil.
func New[K comparable, V any](source canvas.ChangeVersioner, size int) *Cache[K, V] {
	if source == nil {
		return nil
	}
	return &Cache[K, V]{source: source, size: max(size, 1), entries: make(map[K]entry[V])}
}

// Get returns the value for key. It reads the data version first; when the
// cached entry was built under that same version it returns the entry,
// otherwise it calls build and keeps what build returns under the version
// read before the call. Errors of build are returned and never cached; when
// the data version cannot be read, Get calls build and caches nothing.
func (c *Cache[K, V]) Get(ctx context.Context, key K, build func(context.Context) (V, error)) (V, error) {
	if c == nil {
		return build(ctx)
	}
	version, err := c.source.DataVersion(ctx)
	if err != nil {
		return build(ctx)
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok && e.version == version {
		c.hits.Add(1)
		return e.value, nil
	}
	c.misses.Add(1)
	v, err := build(ctx)
	if err != nil {
		return v, err
	}
	c.put(key, entry[V]{version: version, value: v})
	return v, nil
}

// put stores e under key. When the cache is full it first drops every
// entry built under another version (only one version is current, and it is
// most likely the one e was just built under), then, if still full, an
// arbitrary entry (Go's map order is random, so this is random eviction).
func (c *Cache[K, V]) put(key K, e entry[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.size {
		for k, old := range c.entries {
			if old.version != e.version {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.size {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = e
}

// Len returns the number of entries held, fresh or not.
func (c *Cache[K, V]) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Stats counts the Gets a cache served from a fresh entry (Hits) and those
// that called build (Misses), since the cache was made.
type Stats struct{ Hits, Misses uint64 }

// Stats returns the cache's counts; a nil cache has none.
func (c *Cache[K, V]) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load()}
}
