package sqlstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/review"
)

// A write that changes a resource records it in the audit log in its own
// transaction (writeAudited): the resource's state is read before and
// after the change, in the transaction, and one event appended at its end,
// chained to the workspace's last event. The event's chain lock is taken
// last, just before the commit, so that writes of one workspace wait for
// each other only as long as a commit takes.

// resource is a kind of resource the audit log records: its name (the
// events' resourceType) and how its state is read in a transaction.
type resource struct {
	name string
	// state reads the resource's state, as events show it, and who owns
	// it; a state of nil is no resource (not yet created, or deleted).
	state func(ctx context.Context, s *Store, tx *Tx, workspaceID, id string) (any, owner, error)
}

// owner says which project a resource's events belong to: project, or
// the project of the canvas canvasID (read once per event), or none.
type owner struct {
	project  *string
	canvasID string
}

// ofCanvas is the owner of a resource of a canvas.
func ofCanvas(canvasID string) owner { return owner{canvasID: canvasID} }

// change is one audited change: the action (resource.verb) of an actor
// (the context's principal) on a resource of a workspace. id points at the
// resource's id, so that a creation's is read once the write has set it.
type change struct {
	action      string
	kind        resource
	workspaceID string
	id          *string
	// known, when set, returns the states before and after the change and
	// their owner as the write itself read and made them in the
	// transaction (nil: none), once it is done: the change costs no read
	// of its own.
	known func() (before, after any, own owner)
}

// changeOf returns the change of action on the resource of kind whose id
// is at id.
func changeOf(action string, kind resource, workspaceID string, id *string) change {
	return change{action: action, kind: kind, workspaceID: workspaceID, id: id}
}

// writeAudited runs fn as a write of group g that makes change c, and
// appends c's event to the audit log in the same transaction.
func (s *Store) writeAudited(ctx context.Context, g Group, c change, fn func(ctx context.Context, tx *Tx) error) error {
	return s.write(ctx, g, func(ctx context.Context, tx *Tx) error {
		return s.audited(ctx, tx, c, func() error { return fn(ctx, tx) })
	})
}

// writeChange is writeAudited when c is not nil, and a plain write of
// group g otherwise: for a write that only some of its callers make as a
// change of their own.
func (s *Store) writeChange(ctx context.Context, g Group, c *change, fn func(ctx context.Context, tx *Tx) error) error {
	if c == nil {
		return s.write(ctx, g, fn)
	}
	return s.writeAudited(ctx, g, *c, fn)
}

// audited runs fn, which makes change c in tx, and appends c's event: the
// resource's state before fn and after it, read in tx unless the write
// knows them (change.known).
func (s *Store) audited(ctx context.Context, tx *Tx, c change, fn func() error) error {
	before, after, own, err := s.states(ctx, tx, c, fn)
	if err != nil {
		return err
	}
	project := own.project
	if own.canvasID != "" {
		err := tx.QueryRow(ctx, qCanvasProject, own.canvasID).Scan(&project)
		if err != nil && !errors.Is(err, ErrNoRows) {
			return err
		}
	}
	return appendEvent(ctx, tx, c, project, before, after)
}

// states runs fn and returns the states of c's resource before and after
// it, and their owner (the state after's when there is one).
func (s *Store) states(ctx context.Context, tx *Tx, c change, fn func() error) (before, after any, own owner, err error) {
	if c.known != nil {
		if err := fn(); err != nil {
			return nil, nil, owner{}, err
		}
		before, after, own = c.known()
		return before, after, own, nil
	}
	if *c.id != "" {
		if before, own, err = c.kind.state(ctx, s, tx, c.workspaceID, *c.id); err != nil {
			return nil, nil, owner{}, err
		}
	}
	if err := fn(); err != nil {
		return nil, nil, owner{}, err
	}
	after, afterOwn, err := c.kind.state(ctx, s, tx, c.workspaceID, *c.id)
	if err != nil {
		return nil, nil, owner{}, err
	}
	if after != nil {
		own = afterOwn
	}
	return before, after, own, nil
}

// The statements of audited changes; the chain's two, which every change
// runs, are hot on SQLite (HotAuditQueries).
const (
	// qCanvasProject reads the project of a canvas, deleted or not: its
	// project still says whose the change was.
	qCanvasProject = `SELECT project_id FROM canvases WHERE id = ?`
	qAuditHead     = `SELECT seq, hash FROM audit_events WHERE workspace_id = ? ORDER BY seq DESC LIMIT 1`
	qInsertEvent   = `INSERT INTO audit_events (workspace_id, seq, id, time, project_id, actor_type, actor_id,
		action, resource_type, resource_id, before, after, request_id, remote_addr, prev_hash, hash)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
)

// HotAuditQueries are the statements every audited change, a publish among
// them, runs to append its event, which the SQLite driver prepares once.
func HotAuditQueries() []string {
	return []string{qAuditHead, qInsertEvent}
}

// appendEvent appends the event of change c, with the resource's state
// before and after it, to its workspace's chain.
func appendEvent(ctx context.Context, tx *Tx, c change, project *string, before, after any) error {
	b, err := audit.Snapshot(before)
	if err != nil {
		return err
	}
	a, err := audit.Snapshot(after)
	if err != nil {
		return err
	}
	origin := audit.OriginFrom(ctx)
	e := &audit.Event{ID: tx.NewID(), Time: tx.Now.Truncate(audit.Precision), WorkspaceID: c.workspaceID, ProjectID: project,
		Actor: audit.ActorOf(canvas.PrincipalFrom(ctx)), Action: c.action, ResourceType: c.kind.name,
		ResourceID: *c.id, Before: b, After: a, RequestID: origin.RequestID, RemoteAddr: origin.RemoteAddr}
	if err := tx.Lock(ctx, "audit/"+c.workspaceID); err != nil {
		return err
	}
	err = tx.QueryRow(ctx, qAuditHead, c.workspaceID).Scan(&e.Seq, &e.PrevHash)
	if err != nil && !errors.Is(err, ErrNoRows) {
		return err
	}
	e.Seq++
	e.Hash = e.ComputeHash()
	_, err = tx.Exec(ctx, qInsertEvent,
		e.WorkspaceID, e.Seq, e.ID, e.Time, nullString(e.ProjectID), e.Actor.Type, e.Actor.ID, e.Action,
		e.ResourceType, e.ResourceID, nullRaw(e.Before), nullRaw(e.After), e.RequestID, e.RemoteAddr, e.PrevHash, e.Hash)
	return err
}

// auditCols are the columns scanEvent reads, in order.
const auditCols = `workspace_id, seq, id, time, project_id, actor_type, actor_id, action, resource_type,
	resource_id, before, after, request_id, remote_addr, prev_hash, hash`

func scanEvent(r Row) (*audit.Event, error) {
	var e audit.Event
	err := r.Scan(&e.WorkspaceID, &e.Seq, &e.ID, &e.Time, &e.ProjectID, &e.Actor.Type, &e.Actor.ID, &e.Action,
		&e.ResourceType, &e.ResourceID, rawCol{&e.Before}, rawCol{&e.After}, &e.RequestID, &e.RemoteAddr,
		&e.PrevHash, &e.Hash)
	return &e, err
}

// ListAuditEvents returns the page of f's events, newest first.
func (s *Store) ListAuditEvents(ctx context.Context, f audit.Filter) ([]*audit.Event, int, error) {
	where := []string{"workspace_id = ?"}
	args := []any{f.WorkspaceID}
	for _, m := range []struct{ col, v string }{{"resource_type", f.ResourceType}, {"resource_id", f.ResourceID},
		{"actor_id", f.Actor}, {"action", f.Action}} {
		if m.v != "" {
			where = append(where, m.col+" = ?")
			args = append(args, m.v)
		}
	}
	if f.Since != nil {
		where = append(where, "time >= ?")
		args = append(args, *f.Since)
	}
	if f.Until != nil {
		where = append(where, "time < ?")
		args = append(args, *f.Until)
	}
	return listPage(ctx, s, listQuery{cols: auditCols, from: `audit_events`, where: strings.Join(where, " AND "),
		args: args, order: `seq DESC`, limit: f.Limit, offset: f.Offset},
		func(r Rows) (*audit.Event, error) { return scanEvent(r) })
}

// AuditWorkspaces returns the workspaces that have events, in order.
func (s *Store) AuditWorkspaces(ctx context.Context) ([]string, error) {
	return getAll(ctx, s, func(r Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	}, `SELECT DISTINCT workspace_id FROM audit_events ORDER BY workspace_id`)
}

// ScanAuditEvents returns at most limit events of a workspace after seq
// afterSeq, in the order of their seq.
func (s *Store) ScanAuditEvents(ctx context.Context, workspaceID string, afterSeq int64, limit int) ([]*audit.Event, error) {
	return getAll(ctx, s, scanEvent, `SELECT `+auditCols+` FROM audit_events
		WHERE workspace_id = ? AND seq > ? ORDER BY seq LIMIT ?`, workspaceID, afterSeq, limit)
}

// PurgeAuditEvents deletes events older than before, at most limit, from
// the head of each workspace's chain only, and never a chain's last event:
// what is kept is always an unbroken tail of the chain, which the next
// event extends.
func (s *Store) PurgeAuditEvents(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purge(ctx, limit, func(ctx context.Context, tx *Tx) (int64, error) {
		return tx.Exec(ctx, `DELETE FROM audit_events WHERE (workspace_id, seq) IN (
			SELECT a.workspace_id, a.seq FROM audit_events a
			WHERE a.time < ?
				AND a.seq < (SELECT MAX(l.seq) FROM audit_events l WHERE l.workspace_id = a.workspace_id)
				AND NOT EXISTS (SELECT 1 FROM audit_events k WHERE k.workspace_id = a.workspace_id
					AND k.seq < a.seq AND k.time >= ?)
			ORDER BY a.workspace_id, a.seq LIMIT ?)`, before, before, limit)
	})
}

// The resources of the audit log.
var (
	auditCanvas = resource{name: "prompt", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		c, err := getCanvas(ctx, tx, ws, id, "")
		if err != nil {
			return gone(err)
		}
		return c, owner{project: c.ProjectID}, nil
	}}
	auditVersion = resource{name: "prompt-version", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		v, err := s.getVersion(ctx, tx, ws, id)
		if err != nil {
			return gone(err)
		}
		return v, ofCanvas(v.PromptID), nil
	}}
	auditMessage = resource{name: "prompt-version-message", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		m, err := getMessage(ctx, tx, ws, id)
		if err != nil {
			return gone(err)
		}
		var canvasID string
		if err := tx.QueryRow(ctx, `SELECT canvas_id FROM versions WHERE id = ?`, m.PromptVersionID).Scan(&canvasID); err != nil {
			return nil, owner{}, err
		}
		return m, ofCanvas(canvasID), nil
	}}
	auditEnvironment = resource{name: "environment", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		e, err := scanEnvironment(tx.QueryRow(ctx, qEnvByID, ws, id))
		if err != nil {
			return gone(err)
		}
		return envStateOf(e), owner{project: e.ProjectID}, nil
	}}
	auditRequest = resource{name: "publication-request", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		r, err := s.getRequest(ctx, tx, ws, id)
		if err != nil {
			return gone(err)
		}
		return r, ofCanvas(r.ResourceID), nil
	}}
	auditCredential = resource{name: "credential", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		r, err := getCredential(ctx, tx, ws, id, "")
		if err != nil {
			return gone(err)
		}
		// The public half only: the sealed key never reaches the log.
		return r.Credential, owner{}, nil
	}}
	auditPrice = resource{name: "model-price", state: rowState(scanPrice,
		`SELECT `+priceCols+` FROM model_prices WHERE workspace_id = ? AND name = ?`)}
	auditApplication = resource{name: "application", state: func(ctx context.Context, _ *Store, tx *Tx, ws, id string) (any, owner, error) {
		a, err := getApplication(ctx, tx, ws, id, "")
		if err != nil {
			return gone(err)
		}
		return a, owner{}, nil
	}}
	auditTestCase = resource{name: "test-case", state: func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
		tc, err := s.getTestCase(ctx, tx, ws, id)
		if err != nil {
			return gone(err)
		}
		return tc, ofCanvas(tc.PromptID), nil
	}}
	auditTag = resource{name: "test-case-tag", state: func(ctx context.Context, _ *Store, tx *Tx, ws, id string) (any, owner, error) {
		t, err := getTag(ctx, tx, ws, id)
		if err != nil {
			return gone(err)
		}
		return t, ofCanvas(t.PromptID), nil
	}}
	auditExperiment = resource{name: "experiment", state: canvasRowState(scanExperiment, qGetExperiment,
		func(e *experiment.Experiment) string { return e.PromptID })}
	auditEvaluator = resource{name: "evaluator", state: canvasRowState(scanEvaluator,
		`SELECT `+evaluatorCols+` FROM evaluators WHERE workspace_id = ? AND id = ?`,
		func(e *experiment.SavedEvaluator) string { return e.PromptID })}
	auditResult = resource{name: "experiment-result", state: rowState(scanResult,
		// The output is left out (NULL): an annotation does not change it.
		`SELECT `+resultCols+`, NULL FROM experiment_results WHERE workspace_id = ? AND id = ?`)}
	auditReviewItem = resource{name: "review-item", state: canvasRowState(scanReviewItem,
		`SELECT `+reviewCols+` FROM review_items i WHERE i.workspace_id = ? AND i.id = ?`,
		func(it *review.Item) string { return it.PromptID })}
	auditFile = resource{name: "file", state: rowState(scanFile,
		`SELECT `+fileCols+` FROM files WHERE workspace_id = ? AND id = ?`)}
	auditProject = resource{name: "project", state: rowState(scanProject,
		`SELECT `+projectCols+` FROM projects WHERE workspace_id = ? AND id = ?`)}
	auditAPIKey = resource{name: "api-key", state: rowState(scanAPIKey,
		`SELECT `+apiKeyCols+` FROM api_keys WHERE workspace_id = ? AND id = ?`)}
)

// assignmentsOf is the resource of the tag assignments of some test
// cases, whose state maps each test case to its tags: what a bulk tagging
// changes. Its id is empty.
func assignmentsOf(testCaseIDs []string) resource {
	return resource{name: "test-case-tags", state: func(ctx context.Context, s *Store, tx *Tx, ws, _ string) (any, owner, error) {
		rows, err := tx.Query(ctx, `SELECT a.test_case_id, a.tag_id FROM test_case_tag_assignments a
			JOIN test_cases tc ON tc.id = a.test_case_id
			WHERE tc.workspace_id = ? AND `+s.d.InIDs("a.test_case_id")+` ORDER BY a.test_case_id, a.tag_id`,
			ws, IDs(testCaseIDs))
		pairs, err := RowsOf(rows, err, func(r Rows) ([2]string, error) {
			var p [2]string
			return p, r.Scan(&p[0], &p[1])
		})
		if err != nil {
			return nil, owner{}, err
		}
		state := make(map[string][]string, len(testCaseIDs))
		for _, id := range testCaseIDs {
			state[id] = []string{}
		}
		for _, p := range pairs {
			state[p[0]] = append(state[p[0]], p[1])
		}
		return state, owner{}, nil
	}}
}

// envState is an environment as events show it: with its active
// publication and split.
type envState struct {
	*env.Environment
	ActivePublicationID string           `json:"activePublicationId"`
	Split               []env.SplitEntry `json:"split"`
}

// envStateOf returns e's state, nil for none.
func envStateOf(e *env.Environment) any {
	if e == nil {
		return nil
	}
	return envState{e, e.ActivePublicationID, e.Split}
}

// publishSeen is what a publish saw of its environment: before it (nil
// when the publish made production) and after it, serving pub.
type publishSeen struct {
	before, env *env.Environment
	pub         *env.Publication
}

// states returns the environment's states before and after the publish,
// and its owner, for its audit event.
func (p *publishSeen) states() (before, after any, own owner) {
	e := *p.env
	e.ActiveVersionID, e.ActivePublicationID, e.Split = &p.pub.VersionID, p.pub.PublicationID, p.pub.Split
	return envStateOf(p.before), envStateOf(&e), owner{project: p.env.ProjectID}
}

// rowState returns the state function of a resource read by q, whose
// parameters are the workspace and the id, and scanned by scan; it
// belongs to no project.
func rowState[T any](scan func(Row) (T, error), q string) func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
	return canvasRowState(scan, q, nil)
}

// canvasRowState is rowState for a resource of a canvas, whose id
// canvasOf reads (nil: of none).
func canvasRowState[T any](scan func(Row) (T, error), q string, canvasOf func(T) string) func(ctx context.Context, s *Store, tx *Tx, ws, id string) (any, owner, error) {
	return func(ctx context.Context, _ *Store, tx *Tx, ws, id string) (any, owner, error) {
		v, err := scan(tx.QueryRow(ctx, q, ws, id))
		if err != nil {
			return gone(err)
		}
		if canvasOf == nil {
			return v, owner{}, nil
		}
		return v, ofCanvas(canvasOf(v)), nil
	}
}

// gone turns NOT_FOUND, and no row, into no state.
func gone(err error) (any, owner, error) {
	if errors.Is(err, ErrNoRows) || canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil, owner{}, nil
	}
	return nil, owner{}, err
}
