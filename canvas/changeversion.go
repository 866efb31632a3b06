package canvas

import "context"

// ChangeVersioner is implemented by stores that can tell cheaply whether
// anything was committed since an earlier moment. DataVersion returns a
// number that changes whenever a change to workspaces, projects, API keys,
// canvases, versions, messages, environments or publications is committed
// to the store, by any writer including other processes, and stays the same
// otherwise.
// Caches tag each value with the number read before building it and serve
// it only while DataVersion still returns that number, so that they never
// serve stale data. Stores without it are simply not cached; callers detect
// it with a type assertion.
type ChangeVersioner interface {
	DataVersion(ctx context.Context) (int64, error)
}
