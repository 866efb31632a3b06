package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// jsonCol scans a JSON text column into v; NULL leaves v as it is.
type jsonCol struct{ v any }

// Scan implements sql.Scanner.
func (c jsonCol) Scan(src any) error {
	switch s := src.(type) {
	case nil:
		return nil
	case string:
		return json.Unmarshal([]byte(s), c.v)
	case []byte:
		return json.Unmarshal(s, c.v)
	}
	return fmt.Errorf("sqlstore: JSON column holds %T", src)
}

// rawCol scans a nullable JSON text column into a json.RawMessage, nil for
// NULL.
type rawCol struct{ v *json.RawMessage }

// Scan implements sql.Scanner.
func (c rawCol) Scan(src any) error {
	switch s := src.(type) {
	case nil:
		*c.v = nil
	case string:
		*c.v = json.RawMessage(s)
	case []byte:
		*c.v = append(json.RawMessage(nil), s...)
	default:
		return fmt.Errorf("sqlstore: JSON column holds %T", src)
	}
	return nil
}

// nullString is the column value of an optional string.
func nullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// nullRaw is the column value of an optional JSON document; an empty or
// null document is NULL.
func nullRaw(v json.RawMessage) any {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	return string(v)
}

// jsonText encodes v as JSON column text.
func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// jsonOrNull encodes v as JSON text, or NULL when empty is set.
func jsonOrNull[T any](v T, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	return jsonText(v)
}

// orEmpty returns s, or an empty non-nil slice for nil, so that arrays are
// written as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// setList collects the assignments of an UPDATE statement.
type setList struct {
	cols []string
	args []any
}

func (s *setList) add(col string, v any) {
	s.cols = append(s.cols, col+" = ?")
	s.args = append(s.args, v)
}

func (s *setList) sql() string { return strings.Join(s.cols, ", ") }

// RowsOf scans every row with scan and closes rows.
func RowsOf[T any](rows Rows, err error, scan func(Rows) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// createdWithin is the SQL condition (with its leading AND, or nothing)
// that column col lies in [since, until), either bound left out when
// zero; its arguments are appended to args.
func createdWithin(args *[]any, col string, since, until time.Time) string {
	var where string
	if !since.IsZero() {
		where += ` AND ` + col + ` >= ?`
		*args = append(*args, since)
	}
	if !until.IsZero() {
		where += ` AND ` + col + ` < ?`
		*args = append(*args, until)
	}
	return where
}

// listQuery is what listPage reads: columns, table, condition with its
// arguments, order and page.
type listQuery struct {
	cols, from, where, order string
	args                     []any
	limit, offset            int
}

// listPage reads, in one snapshot, how many rows of q.from the condition
// q.where selects and one page of them (q.cols in q.order, q.limit rows
// after q.offset), each read by scan.
func listPage[T any](ctx context.Context, s *Store, q listQuery, scan func(Rows) (T, error)) ([]T, int, error) {
	var page []T
	var total int
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+q.from+` WHERE `+q.where, q.args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+q.cols+` FROM `+q.from+` WHERE `+q.where+` ORDER BY `+q.order+
			` LIMIT ? OFFSET ?`, append(q.args[:len(q.args):len(q.args)], q.limit, q.offset)...)
		page, err = RowsOf(rows, err, scan)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return page, total, nil
}

// getOne reads, in a read-only transaction, the one row that q selects,
// by scan; no row is NOT_FOUND, naming what.
func getOne[T any](ctx context.Context, s *Store, what string, scan func(Row) (T, error), q string, args ...any) (T, error) {
	var v T
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		v, err = scan(tx.QueryRow(ctx, q, args...))
		return err
	})
	if errors.Is(err, ErrNoRows) {
		var zero T
		return zero, canvas.NotFound(what)
	}
	return v, err
}

// getAll reads, in a read-only transaction, every row that q selects,
// each by scan.
func getAll[T any](ctx context.Context, s *Store, scan func(Row) (T, error), q string, args ...any) ([]T, error) {
	var out []T
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		rows, err := tx.Query(ctx, q, args...)
		out, err = RowsOf(rows, err, func(r Rows) (T, error) { return scan(r) })
		return err
	})
	return out, err
}
