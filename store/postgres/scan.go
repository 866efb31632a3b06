package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// scanner is a row to scan: pgx.Row or pgx.Rows.
type scanner interface{ Scan(...any) error }

// querier runs one-row queries: the pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

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
	return fmt.Errorf("postgres: JSON column holds %T", src)
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
		return fmt.Errorf("postgres: JSON column holds %T", src)
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

// ids is a list of ids as a text[] parameter (= ANY($n)); never NULL.
func ids(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// orEmpty returns s, or an empty non-nil slice for nil, so that arrays are
// written as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// params numbers the parameters of a statement built piece by piece.
type params []any

// add appends v and returns its placeholder.
func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

// setList collects the assignments of an UPDATE statement and numbers
// their parameters.
type setList struct {
	cols []string
	args params
}

func (s *setList) add(col string, v any) { s.cols = append(s.cols, col+" = "+s.args.add(v)) }

func (s *setList) sql() string { return strings.Join(s.cols, ", ") }

// rowsOf scans every row with scan and closes rows.
func rowsOf[T any](rows pgx.Rows, err error, scan func(pgx.Rows) (T, error)) ([]T, error) {
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

// createdWithin is the SQL condition (with its leading AND, or nothing) that
// column col lies in [since, until), either bound left out when zero; its
// arguments are added to p.
func createdWithin(p *params, col string, since, until time.Time) string {
	var where string
	if !since.IsZero() {
		where += ` AND ` + col + ` >= ` + p.add(since)
	}
	if !until.IsZero() {
		where += ` AND ` + col + ` < ` + p.add(until)
	}
	return where
}

// listPage reads, in one snapshot, how many rows of from the condition
// where selects and one page of them (cols, in order, limit rows after
// offset), each read by scan.
func listPage[T any](ctx context.Context, db *DB, q listQuery, scan func(pgx.Rows) (T, error)) ([]T, int, error) {
	var page []T
	var total int
	err := db.read(ctx, func(tx *Tx) error {
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+q.from+` WHERE `+q.where, q.args...).Scan(&total); err != nil {
			return err
		}
		args := append(params(nil), q.args...)
		limit, offset := args.add(q.limit), args.add(q.offset)
		rows, err := tx.Query(ctx, `SELECT `+q.cols+` FROM `+q.from+` WHERE `+q.where+
			` ORDER BY `+q.order+` LIMIT `+limit+` OFFSET `+offset, args...)
		page, err = rowsOf(rows, err, scan)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return page, total, nil
}

// listQuery is what listPage reads: columns, table, condition with its
// arguments, order and page.
type listQuery struct {
	cols, from, where, order string
	args                     params
	limit, offset            int
}
