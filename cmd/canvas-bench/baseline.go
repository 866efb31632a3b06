package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite"
)

// cannedResponse is one answer the baseline serves, captured from canvasd:
// the status, every header but Date, and the body, byte for byte.
type cannedResponse struct {
	Method string      `json:"method"`
	Path   string      `json:"path"`
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   []byte      `json:"body"`
}

// commitPayload is the size of the row each commit of the ceiling writes:
// about what a completion's run record takes.
const commitPayload = 1024

// runBaseline is "canvas-bench baseline": a bare net/http server in its own
// process that answers each canned request with canvasd's captured bytes,
// and POST /commit with one durable SQLite commit (canvasd's journal and
// synchronous settings, one writer connection): the one-commit-per-op
// ceiling of the disk holding --commit-dir. It prints "listening on ADDR"
// and serves until ctx ends.
func runBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("canvas-bench baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	responses := fs.String("responses", "", "JSON `file` of the canned responses")
	commitDir := fs.String("commit-dir", "", "`directory` of the ceiling's SQLite database; empty: no /commit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var canned []cannedResponse
	if *responses != "" {
		raw, err := os.ReadFile(*responses)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &canned); err != nil {
			return fmt.Errorf("%s: %w", *responses, err)
		}
	}
	mux := http.NewServeMux()
	for _, c := range canned {
		mux.HandleFunc(c.Method+" "+c.Path, func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			h := w.Header()
			for k, v := range c.Header {
				h[k] = v
			}
			w.WriteHeader(c.Status)
			_, _ = w.Write(c.Body)
		})
	}
	if *commitDir != "" {
		db, err := openCeiling(ctx, *commitDir)
		if err != nil {
			return err
		}
		defer db.Close()
		payload := make([]byte, commitPayload)
		_, _ = rand.Read(payload)
		mux.HandleFunc("POST /commit", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			if _, err := db.ExecContext(r.Context(), `INSERT INTO ops (at, payload) VALUES (?, ?)`,
				time.Now().UTC().Format(time.RFC3339Nano), payload); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "listening on %s\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openCeiling opens the ceiling's database in dir with the settings of
// canvasd's store (store/sqlite: WAL, synchronous=FULL, a busy timeout) and
// one connection, so that every operation is one durable commit of its own.
func openCeiling(ctx context.Context, dir string) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "foreign_keys(ON)")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "ceiling.db")+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ops (id INTEGER PRIMARY KEY, at TEXT NOT NULL, payload BLOB NOT NULL)`); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
