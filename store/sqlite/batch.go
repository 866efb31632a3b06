package sqlite

import (
	"context"
	"errors"

	"github.com/promptcanvas/promptcanvas/env"
)

// errClosed answers a grouped write made after Close.
var errClosed = errors.New("sqlite: database is closed")

// Publish makes the version the active publication of the environment: the
// replaced publication gets unpublishedAt and the new one the next Seq.
// When the version is already active nothing changes and created is false.
// The version must be a live version of the canvas, and a custom
// environment must exist. The job of p.Event, when a subscription takes it, is written under the
// publish's own savepoint, so it commits with the publication, and a
// publish that fails writes neither. With synchronous=FULL one commit per publish would
// cap publishing at the disk's commit rate, so concurrent calls share
// commits (group commit, commit.go); each returns only once its publication
// is durable.
func (db *DB) Publish(ctx context.Context, p env.PublishParams) (*env.Publication, bool, error) {
	var pub *env.Publication
	var created bool
	err := db.groupCommit(ctx, &db.publishCommits, func(ctx context.Context, tx *Tx) error {
		var err error
		pub, created, err = publishTx(ctx, tx, p)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	return pub, created, nil
}
