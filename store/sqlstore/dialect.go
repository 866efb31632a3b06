package sqlstore

import (
	"strconv"
	"strings"
	"time"
)

// Dialect says which database the SQL runs on, and writes the few clauses
// that differ between them.
type Dialect struct {
	// Postgres is set for PostgreSQL, unset for SQLite.
	Postgres bool
}

// The dialects.
var (
	SQLite   = Dialect{}
	Postgres = Dialect{Postgres: true}
)

// ForUpdate is the clause that locks the rows a SELECT reads until the
// transaction ends: empty on SQLite, whose one writer serializes writes.
func (d Dialect) ForUpdate() string {
	if d.Postgres {
		return ` FOR UPDATE`
	}
	return ``
}

// skipLocked is the clause that locks the rows a SELECT reads, passing
// over those another transaction holds; empty on SQLite, whose one writer
// serializes writes.
func (d Dialect) skipLocked() string {
	if d.Postgres {
		return ` FOR UPDATE SKIP LOCKED`
	}
	return ``
}

// forUpdateOf is ForUpdate for the rows of one table of a join, named by
// its alias.
func (d Dialect) forUpdateOf(alias string) string {
	if d.Postgres {
		return ` FOR UPDATE OF ` + alias
	}
	return ``
}

// ForShare is the clause that keeps the rows a SELECT reads from being
// changed or deleted until the transaction ends; empty on SQLite.
func (d Dialect) ForShare() string {
	if d.Postgres {
		return ` FOR SHARE`
	}
	return ``
}

// InIDs is the condition that col is one of the ids of an IDs parameter.
func (d Dialect) InIDs(col string) string {
	if d.Postgres {
		return col + ` = ANY(?)`
	}
	return col + ` IN (SELECT value FROM json_each(?))`
}

// JSONArrayHas is the condition that the JSON array of text col holds the
// string of the next parameter.
func (d Dialect) JSONArrayHas(col string) string {
	if d.Postgres {
		return col + `::jsonb @> jsonb_build_array(?::text)`
	}
	return `EXISTS (SELECT 1 FROM json_each(` + col + `) WHERE value = ?)`
}

// JSONArrayEmpty is the condition that the JSON array of text col is
// empty.
func (d Dialect) JSONArrayEmpty(col string) string {
	if d.Postgres {
		return `jsonb_array_length(` + col + `::jsonb) = 0`
	}
	return `json_array_length(` + col + `) = 0`
}

// IDs is a list of ids bound to one parameter (Dialect.InIDs): a text[]
// on Postgres, a JSON array on SQLite. Nil is the empty list.
type IDs []string

// Rebind numbers the ? parameters of query as Postgres reads them ($1,
// $2, ...). A ? inside a quoted string, a quoted name or a comment is
// left alone. The queries of a store are a fixed set of texts, or a few
// shapes each of the lists build, so a driver caches the answers.
func Rebind(query string) string {
	if !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch c {
		case '\'', '"':
			j := strings.IndexByte(query[i+1:], c)
			if j < 0 {
				b.WriteString(query[i:])
				i = len(query)
				continue
			}
			b.WriteString(query[i : i+j+2])
			i += j + 1
		case '-':
			if i+1 < len(query) && query[i+1] == '-' {
				j := strings.IndexByte(query[i:], '\n')
				if j < 0 {
					j = len(query) - i
				}
				b.WriteString(query[i : i+j])
				i += j - 1
				continue
			}
			b.WriteByte(c)
		case '?':
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Convert returns vals with each value that conv converts (reporting
// true) replaced by its conversion: a driver binds the shared code's
// arguments, and scans into its destinations, as its database keeps them.
// vals is not changed; a copy is made only when a value is converted.
func Convert(vals []any, conv func(any) (any, bool)) []any {
	out := vals
	for i, v := range vals {
		c, ok := conv(v)
		if !ok {
			continue
		}
		if &out[0] == &vals[0] {
			out = append([]any(nil), vals...)
		}
		out[i] = c
	}
	return out
}

// Instant is t as the database keeps it: UTC, and on Postgres truncated to
// the microsecond, its precision, so that what a write returns equals
// what a read returns.
func (d Dialect) Instant(t time.Time) time.Time {
	if d.Postgres {
		return t.UTC().Truncate(time.Microsecond)
	}
	return t.UTC()
}
