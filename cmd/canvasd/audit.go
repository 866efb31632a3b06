package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/store"
)

// auditBatch is how many events the audit commands read at a time.
const auditBatch = 1000

// auditChain is what verify saw of one workspace's chain.
type auditChain struct {
	workspaceID string
	events      int
	// first and last are the seq of the first and last events kept.
	first, last int64
	// head is the hash of the last event.
	head string
}

// auditVerify checks the hash chain of every workspace's audit log (of
// --workspace's alone when given) and prints, per workspace, the events
// checked, the first one kept (retention purges the oldest: verifying
// starts there, taking its prevHash on trust) and the head, which an
// operator keeps elsewhere to catch a rewritten tail later with
// --expect-head. It fails listing every break: an edited event, a
// missing one, or an expected head that is not among the events.
func auditVerify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var (
		cfg       config
		workspace string
		expect    stringList
	)
	fs := newFlagSet("canvasd audit verify", stderr)
	cfg.dataFlag(fs, getenv)
	fs.StringVar(&workspace, "workspace", "", "`id` (or name) of the one workspace to verify; default every workspace")
	fs.Var(&expect, "expect-head", "a head an earlier verify printed and kept elsewhere, as `WORKSPACE_ID=HASH`: "+
		"fail unless that workspace's events still hold it (repeatable)")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	heads := map[string]string{} // workspace id → expected head hash
	for _, raw := range expect {
		ws, hash, ok := strings.Cut(raw, "=")
		ws, hash = strings.TrimSpace(ws), strings.ToLower(strings.TrimSpace(hash))
		if !ok || ws == "" || !isHash(hash) {
			fmt.Fprintf(stderr, "canvasd audit verify: --expect-head %q is not WORKSPACE_ID=HASH (64 hex digits)\n", raw)
			return errUsage
		}
		heads[ws] = hash
	}
	db, wsID, err := openAuditLog(ctx, &cfg, workspace)
	if err != nil {
		return err
	}
	defer db.Close()
	for ws := range heads {
		if wsID != "" && ws != wsID {
			fmt.Fprintf(stderr, "canvasd audit verify: --expect-head names workspace %s, but --workspace is %s\n", ws, wsID)
			return errUsage
		}
	}

	var v audit.Verifier
	var chains []*auditChain
	found := map[string]int64{} // workspace id → seq of its expected head
	err = audit.Walk(ctx, db, wsID, auditBatch, func(e *audit.Event) error {
		if len(chains) == 0 || chains[len(chains)-1].workspaceID != e.WorkspaceID {
			chains = append(chains, &auditChain{workspaceID: e.WorkspaceID, first: e.Seq})
		}
		c := chains[len(chains)-1]
		c.events++
		c.last, c.head = e.Seq, e.Hash
		if h, ok := heads[e.WorkspaceID]; ok && h == e.Hash {
			found[e.WorkspaceID] = e.Seq
		}
		v.Add(e)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the audit log: %w", err)
	}

	broken := map[string]bool{}
	for _, b := range v.Breaks {
		broken[b.WorkspaceID] = true
	}
	spans := map[string]*auditChain{}
	for _, c := range chains {
		spans[c.workspaceID] = c
		fmt.Fprintf(stdout, "workspace %s: %s checked, seq %d to %d", c.workspaceID, plural(c.events, "event"), c.first, c.last)
		if c.first > 1 {
			fmt.Fprintf(stdout, " (events 1 to %d are gone, purged by retention or deleted: verifying starts at %d)",
				c.first-1, c.first)
		}
		if broken[c.workspaceID] {
			fmt.Fprint(stdout, "; BROKEN\n")
		} else {
			fmt.Fprintf(stdout, "; head %d %s\n", c.last, c.head)
		}
	}
	if wsID != "" && len(chains) == 0 {
		fmt.Fprintf(stdout, "workspace %s: no events\n", wsID)
	}

	var problems []string
	for _, b := range v.Breaks {
		problems = append(problems, b.String())
	}
	for _, ws := range slices.Sorted(maps.Keys(heads)) {
		if seq, ok := found[ws]; ok {
			fmt.Fprintf(stdout, "workspace %s: the expected head is event %d\n", ws, seq)
			continue
		}
		where := "the workspace has no events"
		if c := spans[ws]; c != nil {
			why := "the chain's tail was rewritten or removed"
			if c.first > 1 {
				why += ", or retention purged that event"
			}
			where = fmt.Sprintf("it is not among events %d to %d (%s)", c.first, c.last, why)
		}
		problems = append(problems, fmt.Sprintf("workspace %s: the expected head %s is missing: %s", ws, heads[ws], where))
	}
	if len(problems) > 0 {
		return fmt.Errorf("the audit log does not verify:\n  %s", strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(stdout, "verified %s in %s: every chain is whole\n", plural(v.Events, "event"), plural(v.Workspaces, "chain"))
	return nil
}

// auditExport writes the audit log as NDJSON, one event a line, each
// workspace's in the order of its seq: the events' JSON as GET
// /audit-events shows them, before and after byte for byte as recorded,
// so that a reader recomputes each event's hash from its line
// (audit.Event.ComputeHash). --out is written whole or not at all.
func auditExport(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	var workspace, since, out string
	fs := newFlagSet("canvasd audit export", stderr)
	cfg.dataFlag(fs, getenv)
	fs.StringVar(&workspace, "workspace", "", "`id` (or name) of the one workspace to export; default every workspace")
	fs.StringVar(&since, "since", "", "export the events at or after this `time`, RFC 3339 (2026-11-01T00:00:00Z); default every event kept")
	fs.StringVar(&out, "out", "", "`file` to write (replaced; mode 0600); default stdout")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	var from time.Time
	if since != "" {
		var err error
		if from, err = time.Parse(time.RFC3339, since); err != nil {
			fmt.Fprintf(stderr, "canvasd audit export: --since %q is not an RFC 3339 time such as 2026-11-01T00:00:00Z\n", since)
			return errUsage
		}
	}
	db, wsID, err := openAuditLog(ctx, &cfg, workspace)
	if err != nil {
		return err
	}
	defer db.Close()

	w, commit, discard := stdout, func() error { return nil }, func() {}
	if out != "" {
		f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
		if err != nil {
			return err
		}
		w = f
		commit = func() error {
			if err := f.Sync(); err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
			return os.Rename(f.Name(), out)
		}
		discard = func() { f.Close(); os.Remove(f.Name()) }
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err = audit.Walk(ctx, db, wsID, auditBatch, func(e *audit.Event) error {
		if e.Time.Before(from) {
			return nil
		}
		n++
		return enc.Encode(e)
	})
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = commit()
	}
	if err != nil {
		discard()
		return fmt.Errorf("export the audit log: %w", err)
	}
	if out != "" {
		fmt.Fprintf(stdout, "exported %d audit events to %s\n", n, out)
	}
	return nil
}

// openAuditLog opens the store of cfg, which exists, and returns it with
// the id of the workspace ref names ("" for every workspace). The caller
// closes the store.
func openAuditLog(ctx context.Context, cfg *config, ref string) (store.Store, string, error) {
	db, err := cfg.openStore(ctx, false)
	if err != nil {
		return nil, "", err
	}
	wsID, err := auditWorkspace(ctx, db, ref)
	if err != nil {
		db.Close()
		return nil, "", err
	}
	return db, wsID, nil
}

// auditWorkspace returns the id of the workspace ref names, by id or else
// by name; "" for none (every workspace).
func auditWorkspace(ctx context.Context, db store.Store, ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", nil
	}
	ws, err := db.GetWorkspace(ctx, ref)
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		ws, err = db.GetWorkspaceByName(ctx, ref)
	}
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return "", fmt.Errorf("no workspace has the id or name %q", ref)
	}
	if err != nil {
		return "", err
	}
	return ws.ID, nil
}

// isHash reports whether s is an event hash: 64 hex digits.
func isHash(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && len(b) == 32
}
