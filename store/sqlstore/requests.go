package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// qVersionChanged is when a version or one of its messages last changed
// (a message's edit or deletion sets its updated_at): of a request's
// versions, the latest is the stamp it remembers, so that an approval sees
// an edit made since. Its parameters are the version's id twice.
const qVersionChanged = `SELECT MAX(t) FROM (SELECT v.updated_at AS t FROM versions v WHERE v.id = ?
	UNION ALL SELECT m.updated_at FROM messages m WHERE m.version_id = ?) s`

// reqVersions is a subquery of the ids of the versions of request r: its
// version and, for a split, every entry's (r.split, JSON text).
func (d Dialect) reqVersions() string {
	if d.Postgres {
		return `SELECT r.version_id UNION ALL SELECT j ->> 'versionId' FROM jsonb_array_elements(r.split::jsonb) j`
	}
	return `SELECT r.version_id UNION ALL SELECT json_extract(j.value, '$.versionId') FROM json_each(r.split) j`
}

// reqCols are the columns scanRequest reads, from publication_requests r
// joined with environments e: whether the version changed is whether any
// version of the request, or a message of one, changed after the stamp.
func (d Dialect) reqCols() string {
	return `r.id, r.workspace_id, r.canvas_id, r.environment_id, e.name, r.version_id, r.split, r.comment, r.status,
	r.requested_by, e.required_approvals, r.base_version_id, r.base_publication_id,
	(SELECT p.version_id FROM publications p WHERE p.environment_id = r.environment_id AND p.is_active),
	(SELECT p.id FROM publications p WHERE p.environment_id = r.environment_id AND p.is_active),
	(SELECT MAX(t) FROM (SELECT v.updated_at AS t FROM versions v WHERE v.id IN (` + d.reqVersions() + `)
		UNION ALL SELECT m.updated_at FROM messages m WHERE m.version_id IN (` + d.reqVersions() + `)) s) > r.version_changed_at,
	r.decided_by, r.decision_comment, r.publication_id, r.created_at, r.updated_at,
	CASE WHEN r.status = 'pending' THEN NULL ELSE r.updated_at END`
}

// reqFrom joins a request to its environment and to its live canvas.
const reqFrom = ` FROM publication_requests r JOIN environments e ON e.id = r.environment_id
	JOIN canvases c ON c.id = r.canvas_id AND c.deleted_at IS NULL`

func scanRequest(r Row) (*env.PublicationRequest, error) {
	q := env.PublicationRequest{ResourceType: env.ResourcePrompt, Approvals: []env.Approval{}}
	var changed *bool
	var basePub, currentPub *string
	err := r.Scan(&q.ID, &q.WorkspaceID, &q.ResourceID, &q.EnvironmentID, &q.EnvName, &q.VersionID, jsonCol{&q.Split}, &q.Comment,
		&q.Status, &q.RequestedBy, &q.RequiredApprovals, &q.BaseVersionID, &basePub, &q.CurrentVersionID, &currentPub, &changed,
		&q.DecidedBy, &q.DecisionComment, &q.PublicationID, &q.CreatedAt, &q.UpdatedAt, &q.DecidedAt)
	q.RequiredApprovals = max(q.RequiredApprovals, env.MinApprovals)
	q.VersionChanged = changed != nil && *changed && q.Status == env.RequestPending
	// The environment moved when another publication is active than when
	// the request was made; a request made before publications were kept
	// compares versions.
	moved := !sameID(q.BaseVersionID, q.CurrentVersionID)
	if basePub != nil || q.BaseVersionID == nil {
		moved = !sameID(basePub, currentPub)
	}
	q.Stale = q.Status == env.RequestPending && moved
	if q.BaseVersionID != nil {
		path := "/prompt-version/" + q.VersionID + "/diff?against=" + *q.BaseVersionID
		q.DiffPath = &path
	}
	return &q, err
}

// sameID reports whether two optional ids are equal.
func sameID(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// fillApprovals sets the approvals of each request of list, oldest first.
func (s *Store) fillApprovals(ctx context.Context, tx *Tx, list []*env.PublicationRequest) error {
	if len(list) == 0 {
		return nil
	}
	byID := map[string]*env.PublicationRequest{}
	ids := make(IDs, len(list))
	for i, r := range list {
		byID[r.ID], ids[i] = r, r.ID
	}
	rows, err := tx.Query(ctx, `SELECT request_id, approver, comment, created_at FROM publication_approvals
		WHERE `+s.d.InIDs("request_id")+` ORDER BY created_at, approver`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var a env.Approval
		if err := rows.Scan(&id, &a.By, &a.Comment, &a.CreatedAt); err != nil {
			return err
		}
		byID[id].Approvals = append(byID[id].Approvals, a)
	}
	return rows.Err()
}

// getRequest reads a request of a live canvas of the workspace, with its
// approvals.
func (s *Store) getRequest(ctx context.Context, tx *Tx, workspaceID, id string) (*env.PublicationRequest, error) {
	r, err := scanRequest(tx.QueryRow(ctx, `SELECT `+s.d.reqCols()+reqFrom+` WHERE r.id = ? AND r.workspace_id = ?`, id, workspaceID))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("publication request")
	} else if err != nil {
		return nil, err
	}
	return r, s.fillApprovals(ctx, tx, []*env.PublicationRequest{r})
}

// CreateRequest writes a pending request: the environment is found (and
// production created) as a publish finds it, the version must be a live
// version of the canvas (NOT_FOUND), as must each version of a split
// (VALIDATION at its entry), the environment must not serve that version
// and split already (CONFLICT), and what the environment serves and when
// a version of the request last changed are remembered. The created
// step's event is written with it when a subscription takes it.
func (s *Store) CreateRequest(ctx context.Context, p env.CreateRequestParams) (*env.PublicationRequest, error) {
	var out *env.PublicationRequest
	var id string
	err := s.writeAudited(ctx, Alone, changeOf("publication-request.create", auditRequest, p.WorkspaceID, &id), func(ctx context.Context, tx *Tx) error {
		e, err := ensureEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.EnvName)
		if err != nil {
			return err
		}
		if err := checkLive(ctx, tx, p.CanvasID, p.VersionID, p.Split); err != nil {
			return err
		}
		if e.ActiveVersionID != nil && *e.ActiveVersionID == p.VersionID && slices.Equal(e.Split, p.Split) {
			if p.Split != nil {
				return canvas.Errorf(canvas.ECONFLICT, "The %s environment serves this split already.", e.Name)
			}
			return canvas.Errorf(canvas.ECONFLICT, "The %s environment serves this version already.", e.Name)
		}
		changed, err := versionsChanged(ctx, tx, requestVersions(p.VersionID, p.Split))
		if err != nil {
			return err
		}
		var splitText any
		if p.Split != nil {
			b, err := json.Marshal(p.Split)
			if err != nil {
				return err
			}
			splitText = string(b)
		}
		id = tx.NewID()
		if _, err := tx.Exec(ctx, `INSERT INTO publication_requests (id, workspace_id, environment_id, canvas_id, version_id,
			split, status, comment, requested_by, base_version_id, base_publication_id, version_changed_at, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, id, p.WorkspaceID, e.ID, p.CanvasID, p.VersionID, splitText,
			env.RequestPending, p.Comment, p.By, nullString(e.ActiveVersionID), nullID(e.ActivePublicationID),
			slices.MaxFunc(changed, time.Time.Compare), tx.Now, tx.Now); err != nil {
			return err
		}
		if out, err = s.getRequest(ctx, tx, p.WorkspaceID, id); err != nil {
			return err
		}
		return s.writeRequestEvent(ctx, tx, p.Event, env.StepCreated, out)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// requestVersions returns the versions of a request: its version, or each
// version of its split.
func requestVersions(versionID string, split []env.SplitEntry) []string {
	if split == nil {
		return []string{versionID}
	}
	ids := make([]string, len(split))
	for i, e := range split {
		ids[i] = e.VersionID
	}
	return ids
}

// checkLive refuses a request whose version is not a live version of the
// canvas (NOT_FOUND) or, for a split, each entry that is not (VALIDATION
// at its pointer, as a publish of the split says it).
func checkLive(ctx context.Context, tx *Tx, canvasID, versionID string, split []env.SplitEntry) error {
	var details []canvas.Detail
	for i, id := range requestVersions(versionID, split) {
		var live bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM versions WHERE id = ? AND canvas_id = ? AND deleted_at IS NULL)`,
			id, canvasID).Scan(&live); err != nil {
			return err
		} else if live {
			continue
		} else if split == nil {
			return canvas.NotFound("version")
		}
		details = append(details, canvas.Detail{Path: fmt.Sprintf("/json/split/%d/versionId", i),
			Message: "must be a live version of the canvas"})
	}
	if len(details) > 0 {
		return canvas.Invalid("The split names versions that cannot be published.", details...)
	}
	return nil
}

// versionsChanged returns when each version of ids, or a message of it,
// last changed (qVersionChanged).
func versionsChanged(ctx context.Context, tx *Tx, ids []string) ([]time.Time, error) {
	out := make([]time.Time, len(ids))
	for i, id := range ids {
		if err := tx.QueryRow(ctx, qVersionChanged, id, id).Scan(&out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// GetRequest returns a request of a live canvas with its approvals.
func (s *Store) GetRequest(ctx context.Context, workspaceID, id string) (*env.PublicationRequest, error) {
	var out *env.PublicationRequest
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		out, err = s.getRequest(ctx, tx, workspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListRequests returns one page of the requests q selects, newest first,
// with their approvals, and how many it selects. Canvases are those of
// q.Projects (all when nil) and the personal drafts of q.UserID.
func (s *Store) ListRequests(ctx context.Context, q env.RequestQuery) ([]*env.PublicationRequest, int, error) {
	where := []string{"r.workspace_id = ?"}
	args := []any{q.WorkspaceID}
	if q.CanvasID != "" {
		where = append(where, "r.canvas_id = ?")
		args = append(args, q.CanvasID)
	}
	if q.Status != "" {
		where = append(where, "r.status = ?")
		args = append(args, q.Status)
	}
	projects := "c.project_id IS NOT NULL"
	if q.Projects != nil {
		projects = s.d.InIDs("c.project_id")
		args = append(args, IDs(q.Projects))
	}
	where = append(where, "(("+projects+") OR (c.project_id IS NULL AND c.created_by = ?))")
	args = append(args, q.UserID)
	var page []*env.PublicationRequest
	var total int
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		cond := strings.Join(where, " AND ")
		if err := tx.QueryRow(ctx, `SELECT COUNT(*)`+reqFrom+` WHERE `+cond, args...).Scan(&total); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+s.d.reqCols()+reqFrom+` WHERE `+cond+` ORDER BY r.created_at DESC, r.id DESC
			LIMIT ? OFFSET ?`, append(args, q.Limit, q.Offset)...)
		if page, err = RowsOf(rows, err, func(r Rows) (*env.PublicationRequest, error) { return scanRequest(r) }); err != nil {
			return err
		}
		return s.fillApprovals(ctx, tx, page)
	})
	if err != nil {
		return nil, 0, err
	}
	return page, total, nil
}

// lockedRequest is what a decision reads of a request, its row locked.
type lockedRequest struct {
	canvasID, envID, versionID, status, requestedBy string
	split                                           []env.SplitEntry
	changedAt                                       time.Time
}

// versions returns the versions of the request: its version, or each of
// its split.
func (lr lockedRequest) versions() []string { return requestVersions(lr.versionID, lr.split) }

// DecideRequest applies a decision to a pending request (see env.Store).
// An approval locks, in the order every publish does, the versions (FOR
// SHARE: the version, or each of the split), the environment (FOR UPDATE,
// which also holds its policy) and then the request, so that two
// approvals take turns and the count each one reads is the last committed
// one.
func (s *Store) DecideRequest(ctx context.Context, p env.DecideParams) (*env.PublicationRequest, *env.Publication, error) {
	var out *env.PublicationRequest
	var pub *env.Publication
	err := s.writeAudited(ctx, Alone, changeOf("publication-request."+p.Decision, auditRequest, p.WorkspaceID, &p.ID), func(ctx context.Context, tx *Tx) error {
		pub = nil
		var lr lockedRequest
		err := tx.QueryRow(ctx, `SELECT r.canvas_id, r.environment_id, r.version_id, r.split`+reqFrom+` WHERE r.id = ? AND r.workspace_id = ?`,
			p.ID, p.WorkspaceID).Scan(&lr.canvasID, &lr.envID, &lr.versionID, jsonCol{&lr.split})
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("publication request")
		} else if err != nil {
			return err
		}
		var policy envPolicy
		if p.Decision == env.DecisionApprove {
			for _, v := range lr.versions() {
				var id string
				if err := tx.QueryRow(ctx, `SELECT id FROM versions WHERE id = ? AND deleted_at IS NULL`+s.d.ForShare(),
					v).Scan(&id); errors.Is(err, ErrNoRows) {
					return canvas.Errorf(canvas.ECONFLICT, "A version of the request (%s) was deleted.", v)
				} else if err != nil {
					return err
				}
			}
			if policy, err = s.lockPolicy(ctx, tx, lr.envID); err != nil {
				return err
			}
		}
		if err := tx.QueryRow(ctx, `SELECT status, requested_by, version_changed_at FROM publication_requests WHERE id = ?`+
			s.d.ForUpdate(), p.ID).Scan(&lr.status, &lr.requestedBy, &lr.changedAt); err != nil {
			return err
		}
		if lr.status != env.RequestPending {
			return canvas.Errorf(canvas.ECONFLICT, "The publication request is %s already.", lr.status)
		}
		var steps []string
		switch p.Decision {
		case env.DecisionWithdraw:
			if p.By != lr.requestedBy {
				return canvas.Errorf(canvas.EFORBIDDEN, "Only the requester withdraws a publication request.")
			}
			if err := s.closeRequest(ctx, tx, p, env.RequestWithdrawn, nil); err != nil {
				return err
			}
			steps = []string{env.StepWithdrawn}
		case env.DecisionReject:
			if p.By == lr.requestedBy {
				return canvas.Errorf(canvas.EFORBIDDEN, "The requester withdraws a publication request; others reject it.")
			}
			if err := s.closeRequest(ctx, tx, p, env.RequestRejected, nil); err != nil {
				return err
			}
			steps = []string{env.StepRejected}
		case env.DecisionApprove:
			if pub, err = s.approve(ctx, tx, p, lr, policy); err != nil {
				return err
			}
			steps = []string{env.StepApproved}
			if pub != nil {
				steps = append(steps, env.StepPublished)
			}
		default:
			return fmt.Errorf("sqlstore: unknown decision %q", p.Decision)
		}
		if out, err = s.getRequest(ctx, tx, p.WorkspaceID, p.ID); err != nil {
			return err
		}
		for _, step := range steps {
			if err := s.writeRequestEvent(ctx, tx, p.Event, step, out); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, pub, nil
}

// envPolicy is an environment's protection as an approval reads it.
type envPolicy struct {
	name       string
	approvals  int
	experiment *env.RequiredExperiment
}

// lockPolicy locks an environment's row (Dialect.ForUpdate) and reads its
// policy.
func (s *Store) lockPolicy(ctx context.Context, tx *Tx, envID string) (envPolicy, error) {
	var p envPolicy
	err := tx.QueryRow(ctx, `SELECT name, required_approvals, required_experiment FROM environments WHERE id = ?`+
		s.d.ForUpdate(), envID).Scan(&p.name, &p.approvals, jsonCol{&p.experiment})
	if errors.Is(err, ErrNoRows) {
		return p, canvas.NotFound("environment")
	}
	return p, err
}

// closeRequest ends a pending request with status, recording the decision
// and the publication when there is one.
func (s *Store) closeRequest(ctx context.Context, tx *Tx, p env.DecideParams, status string, publicationID *string) error {
	_, err := tx.Exec(ctx, `UPDATE publication_requests SET status = ?, decided_by = ?, decision_comment = ?,
		publication_id = ?, updated_at = ? WHERE id = ?`, status, p.By, p.Comment, nullString(publicationID), tx.Now, p.ID)
	return err
}

// approve records p.By's approval of the locked request lr and, when it
// is the one that reaches the policy's count, publishes the version (or
// the split) with the step every publish takes and returns the
// publication. It is refused when a version of the request was edited
// since it was made, or when the policy's experiment gate does not hold
// for every version of it.
func (s *Store) approve(ctx context.Context, tx *Tx, p env.DecideParams, lr lockedRequest, policy envPolicy) (*env.Publication, error) {
	if p.By == lr.requestedBy {
		return nil, canvas.Errorf(canvas.EFORBIDDEN, "A publication request is approved by someone other than its requester.")
	}
	var again bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM publication_approvals WHERE request_id = ? AND approver = ?)`,
		p.ID, p.By).Scan(&again); err != nil {
		return nil, err
	} else if again {
		return nil, canvas.Errorf(canvas.ECONFLICT, "You approved this publication request already; another person's approval is needed.")
	}
	versions := lr.versions()
	changed, err := versionsChanged(ctx, tx, versions)
	if err != nil {
		return nil, err
	}
	for i, at := range changed {
		if !at.After(lr.changedAt) {
			continue
		} else if lr.split != nil {
			return nil, canvas.Errorf(canvas.ECONFLICT, "Version %s of the split was edited after the request was made; "+
				"request its publication again.", versions[i])
		}
		return nil, canvas.Errorf(canvas.ECONFLICT, "The version was edited after the request was made; request its publication again.")
	}
	if x := policy.experiment; x != nil {
		for i, v := range versions {
			if err := s.checkExperiment(ctx, tx, p.WorkspaceID, lr.canvasID, v, changed[i], lr.split != nil, x); err != nil {
				return nil, err
			}
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO publication_approvals (request_id, approver, comment, created_at) VALUES (?, ?, ?, ?)`,
		p.ID, p.By, p.Comment, tx.Now); err != nil {
		return nil, err
	}
	var count int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM publication_approvals WHERE request_id = ?`, p.ID).Scan(&count); err != nil {
		return nil, err
	}
	if count < max(policy.approvals, env.MinApprovals) {
		_, err := tx.Exec(ctx, `UPDATE publication_requests SET updated_at = ? WHERE id = ?`, tx.Now, p.ID)
		return nil, err
	}
	pub, _, err := s.publishTx(ctx, tx, env.PublishParams{WorkspaceID: p.WorkspaceID, CanvasID: lr.canvasID,
		EnvName: policy.name, VersionID: lr.versionID, Split: lr.split, By: lr.requestedBy, Event: p.Publish}, true)
	if err != nil {
		return nil, err
	}
	return pub, s.closeRequest(ctx, tx, env.DecideParams{ID: p.ID, By: p.By, Comment: p.Comment}, env.RequestPublished,
		&pub.PublicationID)
}

// checkExperiment returns CONFLICT unless a completed experiment of the
// canvas, started at or after changedAt (when the version last changed),
// over test cases of every tag of x, has a pass rate for the version of at
// least x.MinPassRate: decided in one statement of the approval's
// transaction. inSplit names the version in the refusal.
func (s *Store) checkExperiment(ctx context.Context, tx *Tx, workspaceID, canvasID, versionID string, changedAt time.Time,
	inSplit bool, x *env.RequiredExperiment) error {
	var ok bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM experiments x
		WHERE x.workspace_id = ? AND x.prompt_id = ? AND x.status = 'completed' AND x.started_at >= ?
		AND `+s.d.experimentHasTags("x.request")+`
		AND (SELECT SUM(CASE WHEN `+s.d.resultPassed("r")+` THEN 1.0 ELSE 0.0 END) / NULLIF(COUNT(`+s.d.resultPassed("r")+`), 0)
			FROM experiment_results r WHERE r.experiment_id = x.id AND r.version_id = ?) >= ?)`,
		workspaceID, canvasID, changedAt, IDs(orEmpty(x.TagIDs)), versionID, x.MinPassRate).Scan(&ok)
	if err != nil {
		return err
	} else if !ok {
		which := "this version"
		if inSplit {
			which = "every version of the split"
		}
		msg := fmt.Sprintf("The environment requires a completed experiment of %s, started after its last change, over "+
			"its required tags, with a pass rate of at least %g; none has reached it yet", which, x.MinPassRate)
		if inSplit {
			msg += " for version " + versionID
		}
		return canvas.Errorf(canvas.ECONFLICT, "%s.", msg)
	}
	return nil
}

// experimentHasTags is the condition that the request (JSON text) of an
// experiment selected test cases by every tag id of the next parameter
// (IDs).
func (d Dialect) experimentHasTags(col string) string {
	if d.Postgres {
		return `COALESCE(` + col + `::jsonb -> 'tagIds', '[]'::jsonb) @> to_jsonb(?::text[])`
	}
	return `NOT EXISTS (SELECT 1 FROM json_each(?) t WHERE NOT EXISTS (
		SELECT 1 FROM json_each(` + col + `, '$.tagIds') u WHERE u.value = t.value))`
}

// resultPassed is an experiment result's verdict as experiment.Result's
// Passed says it: the annotation's when a person annotated it, else the
// evaluators'; NULL for none.
func (d Dialect) resultPassed(alias string) string {
	if d.Postgres {
		return `(CASE WHEN ` + alias + `.annotation IS NOT NULL THEN (` + alias + `.annotation::jsonb ->> 'passed')::boolean
			ELSE ` + alias + `.verdict END)`
	}
	return `(CASE WHEN ` + alias + `.annotation IS NOT NULL THEN json_extract(` + alias + `.annotation, '$.passed')
		ELSE ` + alias + `.verdict END)`
}

// writeRequestEvent writes the job of a step's event when a subscription
// of the request's canvas takes its type (qSubscribed, in the step's
// transaction); none without one.
func (s *Store) writeRequestEvent(ctx context.Context, tx *Tx, events func(string) *env.RequestEvent, step string, r *env.PublicationRequest) error {
	if events == nil {
		return nil
	}
	ev := events(step)
	if ev == nil {
		return nil
	}
	var taken bool
	if err := tx.QueryRow(ctx, s.d.qSubscribed(), r.WorkspaceID, r.ResourceID, ev.Type).Scan(&taken); err != nil || !taken {
		return err
	}
	job, err := ev.Job(r)
	if err != nil || job == nil {
		return err
	}
	return s.insertJob(ctx, tx, job)
}

// nullID is the column value of an id that is empty when there is none.
func nullID(id string) any {
	if id == "" {
		return nil
	}
	return id
}
