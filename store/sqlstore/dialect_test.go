package sqlstore_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/store/sqlstore"
)

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`SELECT '?' , "a?b", ? -- what?` + "\n" + `, ?`, `SELECT '?' , "a?b", $1 -- what?` + "\n" + `, $2`},
		{`UPDATE t SET a = ?, b = 'it''s ?' WHERE id = ?`, `UPDATE t SET a = $1, b = 'it''s ?' WHERE id = $2`},
		{`SELECT 1 - ?`, `SELECT 1 - $1`},
		{`SELECT 'open ?`, `SELECT 'open ?`},
	} {
		assert.Equal(t, tc.want, sqlstore.Rebind(tc.in), "%s", tc.in)
	}
}
