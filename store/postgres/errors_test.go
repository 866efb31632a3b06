package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/pgtest"
)

// Errors are told apart by SQLSTATE alone: the messages here say nothing.
func TestTranslate(t *testing.T) {
	wrap := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Code: code, Message: "x"}) }
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(translate(wrap(codeUniqueViolation))))
	assert.Equal(t, canvas.ENOTFOUND, canvas.ErrorCode(translate(wrap(codeForeignKeyViolation))))
	other := wrap("22001")
	assert.Equal(t, other, translate(other), "any other error is left as it is")
	assert.True(t, retryable(wrap(codeSerializationFailure)))
	assert.True(t, retryable(wrap(codeDeadlockDetected)))
	assert.False(t, retryable(wrap(codeUniqueViolation)))
	assert.False(t, retryable(errors.New("serialization failure")), "never by message")
}

// A transaction that fails with a serialization failure runs again, with
// a fresh clock reading, until it commits; another error ends it.
func TestWrite_RetriesSerializationFailures(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.New(t))
	require.NoError(t, err)
	defer db.Close()
	var calls atomic.Int32
	err = db.write(ctx, func(tx *Tx) error {
		if calls.Add(1) < 3 {
			// Raised by the server, as a real conflict would be.
			_, err := tx.Exec(ctx, `DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = 'serialization_failure'; END $$`)
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES ('w', 'w', $1)`, tx.now)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, int32(3), calls.Load())
	calls.Store(0)
	err = db.write(ctx, func(tx *Tx) error {
		calls.Add(1)
		_, err := tx.Exec(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES ('w', 'w', $1)`, tx.now)
		return translate(err)
	})
	assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
	assert.Equal(t, int32(1), calls.Load(), "a unique violation is not retried")
}
