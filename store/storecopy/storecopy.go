// Package storecopy moves a deployment from SQLite to Postgres: it copies
// every table of a SQLite database into an empty Postgres database, in the
// order of the target's foreign keys and keeping every id, together with
// the bytes of every uploaded file, and checks the result before it
// commits.
//
// The copy is table by table because the two schemas are the same tables
// and columns (store/postgres's migration says how they differ): each value
// is converted to its target column's type (SQLite's fixed-width UTC text
// to timestamptz, INTEGER 0/1 to boolean, TEXT to bytea where the target
// keeps bytes). A table or column of the source that the target does not
// have stops the copy before anything is written, so that nothing is
// silently left behind.
//
// The source is read in one transaction, so the copy is one consistent
// snapshot even when a server still writes to it (stop it first anyway:
// what it writes afterwards is not copied). The target is written in one
// transaction: a failed copy leaves no records behind.
package storecopy

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/store/postgres"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Options are a copy's source and target.
type Options struct {
	// SQLite is the path of the source database file; it must exist. Its
	// pending migrations are applied first.
	SQLite string
	// Postgres is the target database; it must hold no records.
	Postgres *postgres.DB
	// SourceBlobs holds the bytes of the source's files (the files
	// directory beside the database); TargetBlobs receives them.
	SourceBlobs, TargetBlobs vault.Blobs
	// Progress, when set, receives one line per table and a line for the
	// files.
	Progress io.Writer
}

// Report is what a copy wrote.
type Report struct {
	// Tables holds the rows copied, per table, in the order copied.
	Tables []TableReport
	// Files is how many uploaded files had their bytes copied, and Bytes
	// their total size.
	Files int
	Bytes int64
}

// TableReport is one table's row count, checked equal in the source and
// the target.
type TableReport struct {
	Name string
	Rows int64
}

// Tables that are each store's own and are never copied: the record of
// applied migrations, the cache revision counter (every commit moves it;
// its value means nothing to another database), and the bytes of files
// kept in the database, which the copy writes through TargetBlobs.
var ownTables = map[string]bool{
	"migrations":        true,
	"schema_migrations": true,
	"revision":          true,
	"blob_chunks":       true,
}

// SQLiteToPostgres copies everything in opts.SQLite into opts.Postgres and
// the bytes of its uploaded files from SourceBlobs to TargetBlobs. A target
// that holds any record is refused before anything is written. After the
// rows are copied, the row count of every table is compared between source
// and target, and every file's bytes are checked against the size and
// SHA-256 its record holds; any difference rolls the copy back.
func SQLiteToPostgres(ctx context.Context, opts Options) (*Report, error) {
	if opts.Postgres == nil || opts.SourceBlobs == nil || opts.TargetBlobs == nil {
		return nil, errors.New("storecopy: Postgres, SourceBlobs and TargetBlobs are required")
	}
	src, err := openSource(ctx, opts.SQLite)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	stx, err := src.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", opts.SQLite, err)
	}
	defer stx.Rollback()

	c := &copier{opts: opts, src: stx, report: &Report{}}
	if err := c.run(ctx); err != nil {
		return nil, err
	}
	return c.report, nil
}

// openSource applies the source's pending migrations, so that its schema is
// the one the target's mirrors, and opens it again for reading alone.
func openSource(ctx context.Context, path string) (*sql.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("source database: %w", err)
	}
	db, err := sqlite.Open(ctx, abs)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	src, err := sql.Open("sqlite", "file:"+abs+"?_pragma=busy_timeout(10000)&_pragma=query_only(ON)")
	if err != nil {
		return nil, err
	}
	// One connection: the read transaction is the only user.
	src.SetMaxOpenConns(1)
	return src, nil
}

// copier is one copy in progress.
type copier struct {
	opts   Options
	src    *sql.Tx
	dst    pgx.Tx
	report *Report
}

func (c *copier) progress(format string, args ...any) {
	if c.opts.Progress != nil {
		fmt.Fprintf(c.opts.Progress, format+"\n", args...)
	}
}

func (c *copier) run(ctx context.Context) error {
	sourceTables, err := c.sourceTables(ctx)
	if err != nil {
		return err
	}
	tx, err := c.opts.Postgres.Pool().BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		return err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	c.dst = tx
	target, err := readTargetSchema(ctx, tx)
	if err != nil {
		return err
	}
	plan, err := planTables(sourceTables, target)
	if err != nil {
		return err
	}
	if err := c.requireEmpty(ctx, target); err != nil {
		return err
	}
	for _, t := range plan {
		n, err := c.copyTable(ctx, t, target.tables[t.name])
		if err != nil {
			return fmt.Errorf("copy table %s: %w", t.name, err)
		}
		c.report.Tables = append(c.report.Tables, TableReport{Name: t.name, Rows: n})
		c.progress("%-28s %d rows", t.name, n)
	}
	if err := c.moveIdentities(ctx, plan, target); err != nil {
		return err
	}
	if err := c.verifyCounts(ctx); err != nil {
		return err
	}
	if err := c.copyFiles(ctx); err != nil {
		return err
	}
	c.progress("%-28s %d files, %d bytes", "files", c.report.Files, c.report.Bytes)
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// sourceTable is a table of the source and its columns, in order.
type sourceTable struct {
	name    string
	columns []string
	rowid   bool
}

// sourceTables lists the tables of the source, but for the store's own.
func (c *copier) sourceTables(ctx context.Context) ([]sourceTable, error) {
	rows, err := c.src.QueryContext(ctx,
		`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var tables []sourceTable
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return nil, err
		}
		if ownTables[name] {
			continue
		}
		tables = append(tables, sourceTable{name: name,
			rowid: !strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID")})
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	for i := range tables {
		cols, err := c.sourceColumns(ctx, tables[i].name)
		if err != nil {
			return nil, err
		}
		tables[i].columns = cols
	}
	return tables, nil
}

func (c *copier) sourceColumns(ctx context.Context, table string) ([]string, error) {
	rows, err := c.src.QueryContext(ctx, `SELECT name FROM pragma_table_info(?) ORDER BY cid`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		cols = append(cols, name)
	}
	return cols, rows.Err()
}

// targetSchema is what the copy needs to know of the target: each table's
// columns with their types, and which tables each one references.
type targetSchema struct {
	tables     map[string]map[string]targetColumn
	references map[string][]string
}

// targetColumn is a column of the target.
type targetColumn struct {
	dataType string
	// serial is set for identity columns and those whose default draws
	// from a sequence: after rows are inserted with explicit values, the
	// sequence must move past them.
	serial bool
}

func readTargetSchema(ctx context.Context, tx pgx.Tx) (*targetSchema, error) {
	s := &targetSchema{tables: map[string]map[string]targetColumn{}, references: map[string][]string{}}
	rows, err := tx.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type,
			c.is_identity = 'YES' OR COALESCE(c.column_default, '') LIKE 'nextval(%'
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, fmt.Errorf("read the target's schema: %w", err)
	}
	for rows.Next() {
		var table, column string
		var col targetColumn
		if err := rows.Scan(&table, &column, &col.dataType, &col.serial); err != nil {
			rows.Close()
			return nil, err
		}
		if s.tables[table] == nil {
			s.tables[table] = map[string]targetColumn{}
		}
		s.tables[table][column] = col
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = tx.Query(ctx, `SELECT src.relname, dst.relname
		FROM pg_constraint k
		JOIN pg_class src ON src.oid = k.conrelid
		JOIN pg_class dst ON dst.oid = k.confrelid
		JOIN pg_namespace n ON n.oid = k.connamespace
		WHERE k.contype = 'f' AND n.nspname = current_schema()`)
	if err != nil {
		return nil, fmt.Errorf("read the target's foreign keys: %w", err)
	}
	for rows.Next() {
		var from, to string
		if err := rows.Scan(&from, &to); err != nil {
			rows.Close()
			return nil, err
		}
		if from != to {
			s.references[from] = append(s.references[from], to)
		}
	}
	return s, rows.Err()
}

// planTables checks that the target has every table and column of the
// source and orders the source's tables so that each comes after the
// tables it references (a table's references to itself are satisfied
// within its one COPY statement). Ties go by name, so that a plan is the
// same every time.
func planTables(source []sourceTable, target *targetSchema) ([]sourceTable, error) {
	byName := map[string]sourceTable{}
	for _, t := range source {
		cols, ok := target.tables[t.name]
		if !ok {
			return nil, fmt.Errorf("the target has no table %s: it is not a Prompt Canvas database of this version", t.name)
		}
		for _, col := range t.columns {
			if _, ok := cols[col]; !ok {
				return nil, fmt.Errorf("the target's table %s has no column %s", t.name, col)
			}
		}
		byName[t.name] = t
	}
	var plan []sourceTable
	state := map[string]int{} // 1: being visited, 2: planned
	var visit func(name string, path []string) error
	visit = func(name string, path []string) error {
		switch state[name] {
		case 1:
			return fmt.Errorf("the target's foreign keys form a cycle: %s", strings.Join(append(path, name), " → "))
		case 2:
			return nil
		}
		state[name] = 1
		refs := slices.Clone(target.references[name])
		slices.Sort(refs)
		for _, ref := range refs {
			if _, ok := byName[ref]; !ok {
				continue
			}
			if err := visit(ref, append(path, name)); err != nil {
				return err
			}
		}
		state[name] = 2
		plan = append(plan, byName[name])
		return nil
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := visit(name, nil); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// requireEmpty refuses a target that holds any record.
func (c *copier) requireEmpty(ctx context.Context, target *targetSchema) error {
	names := make([]string, 0, len(target.tables))
	for name := range target.tables {
		if !ownTables[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		var any bool
		if err := c.dst.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+pgx.Identifier{name}.Sanitize()+`)`).Scan(&any); err != nil {
			return fmt.Errorf("check that the target is empty: %w", err)
		}
		if any {
			return fmt.Errorf("the target database is not empty (table %s has rows): copy only into a new database", name)
		}
	}
	return nil
}

// copyTable copies the rows of one table in one COPY statement, in the
// source's insertion order (rowid), and returns how many it copied.
func (c *copier) copyTable(ctx context.Context, t sourceTable, cols map[string]targetColumn) (int64, error) {
	quoted := make([]string, len(t.columns))
	types := make([]string, len(t.columns))
	for i, col := range t.columns {
		quoted[i] = `"` + col + `"`
		types[i] = cols[col].dataType
	}
	order := "rowid"
	if !t.rowid {
		order = "1"
	}
	rows, err := c.src.QueryContext(ctx, `SELECT `+strings.Join(quoted, ", ")+` FROM "`+t.name+`" ORDER BY `+order)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	return c.dst.CopyFrom(ctx, pgx.Identifier{t.name}, t.columns, &rowSource{rows: rows, cols: t.columns, types: types})
}

// rowSource feeds the rows of a source query to COPY, each value converted
// to its target column's type.
type rowSource struct {
	rows   *sql.Rows
	cols   []string
	types  []string
	values []any
	err    error
}

func (r *rowSource) Next() bool { return r.err == nil && r.rows.Next() }

func (r *rowSource) Values() ([]any, error) {
	raw := make([]any, len(r.cols))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := r.rows.Scan(ptrs...); err != nil {
		r.err = err
		return nil, err
	}
	out := make([]any, len(raw))
	for i, v := range raw {
		cv, err := convert(v, r.types[i])
		if err != nil {
			r.err = fmt.Errorf("column %s: %w", r.cols[i], err)
			return nil, r.err
		}
		out[i] = cv
	}
	return out, nil
}

func (r *rowSource) Err() error { return cmp.Or(r.err, r.rows.Err()) }

// sqliteTimeLayout is how store/sqlite writes instants.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000000Z"

// convert turns a value read from SQLite into one for a target column of
// type dataType (information_schema's name of it).
func convert(v any, dataType string) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch dataType {
	case "timestamp with time zone", "timestamp without time zone":
		s, ok := asString(v)
		if !ok {
			return nil, fmt.Errorf("%T is not a timestamp", v)
		}
		t, err := time.Parse(sqliteTimeLayout, s)
		if err != nil {
			if t, err = time.Parse(time.RFC3339Nano, s); err != nil {
				return nil, fmt.Errorf("%q is not a timestamp", s)
			}
		}
		return t.UTC(), nil
	case "boolean":
		switch x := v.(type) {
		case int64:
			return x != 0, nil
		case bool:
			return x, nil
		}
		return nil, fmt.Errorf("%T is not a flag", v)
	case "bigint", "integer", "smallint":
		switch x := v.(type) {
		case int64:
			return x, nil
		case string:
			return strconv.ParseInt(x, 10, 64)
		}
		return nil, fmt.Errorf("%T is not an integer", v)
	case "double precision", "real", "numeric":
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		}
		return nil, fmt.Errorf("%T is not a number", v)
	case "text", "character varying", "json", "jsonb":
		if s, ok := asString(v); ok {
			return s, nil
		}
		if n, ok := v.(int64); ok {
			return strconv.FormatInt(n, 10), nil
		}
		return nil, fmt.Errorf("%T is not text", v)
	case "bytea":
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
		return nil, fmt.Errorf("%T is not bytes", v)
	}
	return nil, fmt.Errorf("the target's column type %s is not one the copy knows", dataType)
}

func asString(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case []byte:
		return string(x), true
	}
	return "", false
}

// moveIdentities moves every sequence behind a column of a copied table
// past the largest value the copy wrote, so that the next row the store
// inserts does not collide with a copied one.
func (c *copier) moveIdentities(ctx context.Context, plan []sourceTable, target *targetSchema) error {
	for _, t := range plan {
		cols := make([]string, 0)
		for name, col := range target.tables[t.name] {
			if col.serial {
				cols = append(cols, name)
			}
		}
		slices.Sort(cols)
		for _, col := range cols {
			table := pgx.Identifier{t.name}.Sanitize()
			if _, err := c.dst.Exec(ctx, `SELECT setval(pg_get_serial_sequence($1, $2), COALESCE(MAX(`+
				pgx.Identifier{col}.Sanitize()+`), 0) + 1, false) FROM `+table, table, col); err != nil {
				return fmt.Errorf("move the sequence of %s.%s: %w", t.name, col, err)
			}
		}
	}
	return nil
}

// verifyCounts compares the row count of every copied table in the
// source and in the target.
func (c *copier) verifyCounts(ctx context.Context) error {
	for _, t := range c.report.Tables {
		var src, dst int64
		if err := c.src.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+t.Name+`"`).Scan(&src); err != nil {
			return err
		}
		if err := c.dst.QueryRow(ctx, `SELECT COUNT(*) FROM `+pgx.Identifier{t.Name}.Sanitize()).Scan(&dst); err != nil {
			return err
		}
		if src != dst || src != t.Rows {
			return fmt.Errorf("table %s: %d rows in the source, %d copied, %d in the target", t.Name, src, t.Rows, dst)
		}
	}
	return nil
}

// copyFiles copies the bytes of every uploaded file, under the same key,
// and checks each copy against the size and SHA-256 of its record. The
// records are read from the target, as copied.
func (c *copier) copyFiles(ctx context.Context) error {
	rows, err := c.dst.Query(ctx, `SELECT id, blob_key, size, sha256 FROM files
		WHERE blob_key IS NOT NULL AND blob_key <> '' ORDER BY id`)
	if err != nil {
		return fmt.Errorf("list files: %w", err)
	}
	type file struct {
		id, key, sum string
		size         int64
	}
	var files []file
	for rows.Next() {
		var f file
		if err := rows.Scan(&f.id, &f.key, &f.size, &f.sum); err != nil {
			rows.Close()
			return err
		}
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range files {
		size, sum, err := c.copyBlob(ctx, f.key, f.size)
		if err != nil {
			return fmt.Errorf("file %s: %w", f.id, err)
		}
		if size != f.size || sum != f.sum {
			return fmt.Errorf("file %s: copied %d bytes with SHA-256 %s, its record says %d bytes with %s",
				f.id, size, sum, f.size, f.sum)
		}
		c.report.Files++
		c.report.Bytes += size
	}
	return nil
}

// copyBlob copies one blob; more than limit bytes is an error.
func (c *copier) copyBlob(ctx context.Context, key string, limit int64) (int64, string, error) {
	rc, err := c.opts.SourceBlobs.Open(ctx, key)
	if err != nil {
		return 0, "", fmt.Errorf("read its bytes: %w", err)
	}
	defer rc.Close()
	return c.opts.TargetBlobs.Put(ctx, key, rc, limit)
}
