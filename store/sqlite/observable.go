package sqlite

import "github.com/promptcanvas/promptcanvas/store"

var _ store.Observable = (*DB)(nil)

// SetObserver makes o the DB's Observer when it has none; call it before
// the DB is used.
func (db *DB) SetObserver(o store.Observer) {
	if db.Observer == nil {
		db.Observer = o
	}
}
