package server

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
)

// query reads and checks query parameters, collecting every problem so that
// one 422 can list them all:
//
//	q := newQuery(r)
//	id := q.UUID("promptId", true)
//	limit := q.Int("limit", 20)
//	if err := q.Err(); err != nil { return err }
type query struct {
	values  url.Values
	details []canvas.Detail
}

func newQuery(r *http.Request) *query { return &query{values: r.URL.Query()} }

func (q *query) fail(name, msg string) {
	q.details = append(q.details, canvas.Detail{Path: "/query/" + name, Message: msg})
}

// String returns the parameter, noting a problem when it is required and
// missing.
func (q *query) String(name string, required bool) string {
	v := q.values.Get(name)
	if v == "" && required {
		q.fail(name, "is required")
	}
	return v
}

// UUID returns the parameter when it is a UUID.
func (q *query) UUID(name string, required bool) string {
	v := q.String(name, required)
	if v != "" {
		if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
			q.fail(name, "must be a UUID")
			return ""
		}
	}
	return v
}

// UUIDs returns every value of a repeated parameter, each a UUID.
func (q *query) UUIDs(name string) []string {
	var out []string
	for _, v := range q.values[name] {
		if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
			q.fail(name, "every value must be a UUID")
			continue
		}
		out = append(out, v)
	}
	return out
}

// Int returns the parameter as an integer, or def when it is absent.
func (q *query) Int(name string, def int) int {
	v := q.values.Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		q.fail(name, "must be an integer")
		return def
	}
	return n
}

// Bool returns the parameter as a boolean, or def when it is absent.
func (q *query) Bool(name string, def bool) bool {
	v := q.values.Get(name)
	if v == "" {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		q.fail(name, "must be true or false")
		return def
	}
	return b
}

// Time returns the parameter as an RFC 3339 date-time, or the zero time
// when it is absent.
func (q *query) Time(name string) time.Time {
	v := q.values.Get(name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		q.fail(name, "must be an RFC 3339 date-time")
		return time.Time{}
	}
	return t
}

// Enum returns the parameter when it is one of allowed.
func (q *query) Enum(name string, required bool, allowed ...string) string {
	v := q.String(name, required)
	if v == "" {
		return v
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	q.fail(name, "must be one of "+quoteList(allowed))
	return ""
}

// Err returns a VALIDATION error listing every problem, or nil.
func (q *query) Err() error {
	if len(q.details) == 0 {
		return nil
	}
	return canvas.Invalid("Query parameters failed validation.", q.details...)
}

// ErrWith is Err with more problems found in the parsed values, those of
// a parameter that already failed to parse left out: one answer lists
// every problem.
func (q *query) ErrWith(more []canvas.Detail) error {
	if len(q.details) == 0 {
		return nil
	}
	details := q.details
	for _, d := range more {
		if !slices.ContainsFunc(q.details, func(f canvas.Detail) bool { return f.Path == d.Path }) {
			details = append(details, d)
		}
	}
	return canvas.Invalid("Query parameters failed validation.", details...)
}

func quoteList(items []string) string {
	s := ""
	for i, it := range items {
		if i > 0 {
			s += ", "
		}
		s += strconv.Quote(it)
	}
	return s
}

// pathUUID returns a path parameter that must be a UUID: a malformed id is
// a VALIDATION error, so that a typo is told apart from a missing resource.
func pathUUID(r *http.Request, name string) (string, error) {
	v := r.PathValue(name)
	if _, err := uuid.Parse(v); err != nil || len(v) != 36 {
		return "", canvas.Invalid("Path parameters failed validation.", canvas.Detail{Path: "/path/" + name, Message: "must be a UUID"})
	}
	return v, nil
}
