package sqlite

import (
	"encoding/json"
	"fmt"
	"time"
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

// nullTime is the column value of an optional timestamp.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
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
