package postgres

import (
	"context"
	"fmt"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Compile-time check that DB offers its data version to caches.
var _ canvas.ChangeVersioner = (*DB)(nil)

// DataVersion returns the revision counter (migration 001): a number that
// changes whenever a change to a table that caches derive values from
// (workspaces, projects, API keys, canvases, favorites, versions, messages,
// environments, publications) is committed, by this DB or by any other
// process on the database, and stays the same otherwise; commits to other
// tables, such as run records and job leases, leave it alone.
//
// It is sound as a change detector because the increment is written by the
// changing transaction itself, at its commit: the change and the new
// number become visible together. A reader that reads n and then builds a
// value may see changes committed after its read of n (the value is then
// newer than its tag, never older), and any such change has moved the
// counter past n, so the value is not served again. The counter is read on
// every call, one indexed row, so a replica never trusts what it saw
// before.
func (db *DB) DataVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := db.pool.QueryRow(ctx, `SELECT value FROM revision WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("postgres: data version: %w", err)
	}
	return v, nil
}
