package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// timeCol scans a NOT NULL timestamp column into *t.
type timeCol struct{ t *time.Time }

// Scan implements sql.Scanner.
func (c timeCol) Scan(src any) error {
	s, ok := src.(string)
	if !ok {
		return fmt.Errorf("sqlite: timestamp column holds %T", src)
	}
	t, err := parseTime(s)
	if err != nil {
		return err
	}
	*c.t = t
	return nil
}

// nullTimeCol scans a nullable timestamp column into *t, nil for NULL.
type nullTimeCol struct{ t **time.Time }

// Scan implements sql.Scanner.
func (c nullTimeCol) Scan(src any) error {
	if src == nil {
		*c.t = nil
		return nil
	}
	var t time.Time
	if err := (timeCol{&t}).Scan(src); err != nil {
		return err
	}
	*c.t = &t
	return nil
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
	return fmt.Errorf("sqlite: JSON column holds %T", src)
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
		return fmt.Errorf("sqlite: JSON column holds %T", src)
	}
	return nil
}

// nullTime is the column value of an optional timestamp.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
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

// jsonOrNull encodes v as JSON text, or NULL when v is a nil pointer or an
// empty slice.
func jsonOrNull[T any](v T, empty bool) (any, error) {
	if empty {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// reachSQL is the SQL condition that canvas column col names a live canvas
// of scope: one of its projects (every project when scope.Projects is nil),
// or a personal draft of scope.UserID; it returns the condition with its
// arguments.
func reachSQL(col string, scope canvas.Scope) (string, []any) {
	args := []any{scope.WorkspaceID}
	reach := `c.project_id IS NOT NULL`
	if scope.Projects != nil {
		reach = `c.project_id IN (SELECT value FROM json_each(?))`
		args = append(args, idList(scope.Projects))
	}
	if scope.UserID != "" {
		reach = `(` + reach + `) OR (c.project_id IS NULL AND c.created_by = ?)`
		args = append(args, scope.UserID)
	}
	return `EXISTS (SELECT 1 FROM canvases c WHERE c.workspace_id = ? AND c.id = ` + col +
		` AND c.deleted_at IS NULL AND (` + reach + `))`, args
}

// idList encodes ids as a JSON array, the one parameter of an
// "IN (SELECT value FROM json_each(?))" clause.
func idList(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	b, err := json.Marshal(ids)
	if err != nil {
		panic(err) // a []string always encodes
	}
	return string(b)
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

// rowsOf scans every row with scan and closes rows.
func rowsOf[T any](rows *sql.Rows, err error, scan func(*sql.Rows) (T, error)) ([]T, error) {
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
func listPage[T any](ctx context.Context, db *DB, q listQuery, scan func(*sql.Rows) (T, error)) ([]T, int, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	var total int
	if err := tx.queryRow(ctx, `SELECT COUNT(*) FROM `+q.from+` WHERE `+q.where, q.args...).Scan(&total); err != nil {
		return nil, 0, translate(err)
	}
	rows, err := tx.query(ctx, `SELECT `+q.cols+` FROM `+q.from+` WHERE `+q.where+` ORDER BY `+q.order+
		` LIMIT ? OFFSET ?`, append(q.args, q.limit, q.offset)...)
	page, err := rowsOf(rows, err, scan)
	if err != nil {
		return nil, 0, err
	}
	return page, total, tx.Commit()
}
