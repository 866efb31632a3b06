package pgtest

import "testing"

func TestWithDatabase(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"postgres://u:p@127.0.0.1:5432/postgres?sslmode=disable", "postgres://u:p@127.0.0.1:5432/x?sslmode=disable"},
		{"postgresql://u@h/", "postgresql://u@h/x"},
		{"host=127.0.0.1 port=5432 user=u dbname=postgres", "host=127.0.0.1 port=5432 user=u dbname=postgres dbname=x"},
	} {
		if got := WithDatabase(c.dsn, "x"); got != c.want {
			t.Errorf("WithDatabase(%q) = %q, want %q", c.dsn, got, c.want)
		}
	}
}
