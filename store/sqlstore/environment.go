package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// envCols are the columns scanEnvironment reads, in order, from
// environments e joined with canvases c and their active publication ap
// (envFrom).
const envCols = `e.id, e.name, e.is_system, e.canvas_id, c.workspace_id, e.created_by, e.created_at,
	ap.version_id, ap.id, ap.split, e.protected, e.required_approvals, e.required_experiment, c.project_id`

// liveEnv joins environments e to a live canvas c of the workspace bound to
// the first parameter.
const liveEnv = ` FROM environments e JOIN canvases c ON c.id = e.canvas_id
	WHERE c.workspace_id = ? AND c.deleted_at IS NULL`

// envFrom is liveEnv with each environment's active publication ap, when
// it has one (publications_one_active: at most one).
const envFrom = ` FROM environments e JOIN canvases c ON c.id = e.canvas_id
	LEFT JOIN publications ap ON ap.environment_id = e.id AND ap.is_active
	WHERE c.workspace_id = ? AND c.deleted_at IS NULL`

// qEnvByID reads an environment by id; its parameters are the workspace
// and the id.
const qEnvByID = `SELECT ` + envCols + envFrom + ` AND e.id = ?`

// qFindEnv reads an environment by canvas and name.
const qFindEnv = `SELECT ` + envCols + envFrom + ` AND e.canvas_id = ? AND e.name = ?`

func scanEnvironment(r Row) (*env.Environment, error) {
	e := env.Environment{ResourceType: env.ResourcePrompt}
	var pubID *string
	err := r.Scan(&e.ID, &e.Name, &e.IsSystem, &e.ResourceID, &e.WorkspaceID, &e.CreatedBy,
		&e.CreatedAt, &e.ActiveVersionID, &pubID, jsonCol{&e.Split}, &e.Protected, &e.RequiredApprovals,
		jsonCol{&e.RequiredExperiment}, &e.ProjectID)
	if pubID != nil {
		e.ActivePublicationID = *pubID
	}
	return &e, err
}

// CreateEnvironment inserts a custom environment of a live canvas, setting
// its id when empty and its creation time; a duplicate name on the same
// canvas is CONFLICT.
func (s *Store) CreateEnvironment(ctx context.Context, e *env.Environment) error {
	return s.writeAudited(ctx, Alone, changeOf("environment.create", auditEnvironment, e.WorkspaceID, &e.ID), func(ctx context.Context, tx *Tx) error {
		if err := checkCanvas(ctx, tx, e.WorkspaceID, e.ResourceID); err != nil {
			return err
		}
		if e.ID == "" {
			e.ID = tx.NewID()
		}
		e.ResourceType, e.IsSystem, e.CreatedAt, e.ActiveVersionID = env.ResourcePrompt, false, tx.Now, nil
		_, err := tx.Exec(ctx, `INSERT INTO environments (id, canvas_id, name, is_system, created_by, created_at)
			VALUES (?, ?, ?, false, ?, ?)`, e.ID, e.ResourceID, e.Name, e.CreatedBy, tx.Now)
		if canvas.ErrorCode(err) == canvas.ECONFLICT {
			return &canvas.Error{Code: canvas.ECONFLICT, Message: "An environment named " + e.Name + " already exists.", Err: err}
		}
		return err
	})
}

// GetEnvironment returns an environment of a live canvas.
func (s *Store) GetEnvironment(ctx context.Context, workspaceID, id string) (*env.Environment, error) {
	var e *env.Environment
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		e, err = scanEnvironment(tx.QueryRow(ctx, qEnvByID, workspaceID, id))
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("environment")
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// findEnv returns the environment of a live canvas by name, or nil when
// the canvas has none of that name; a missing canvas is NOT_FOUND.
func findEnv(ctx context.Context, tx *Tx, workspaceID, canvasID, name string) (*env.Environment, error) {
	e, err := scanEnvironment(tx.QueryRow(ctx, qFindEnv, workspaceID, canvasID, name))
	if errors.Is(err, ErrNoRows) {
		return nil, checkCanvas(ctx, tx, workspaceID, canvasID)
	}
	return e, err
}

// ensureEnv returns the environment of a live canvas by name, creating
// production when it is missing; any other missing name is NOT_FOUND. The
// insert tolerates a concurrent creation (ON CONFLICT waits for it, then
// does nothing), so callers need no retry.
func ensureEnv(ctx context.Context, tx *Tx, workspaceID, canvasID, name string) (*env.Environment, error) {
	e, err := findEnv(ctx, tx, workspaceID, canvasID, name)
	if err != nil || e != nil {
		return e, err
	} else if name != env.Production {
		return nil, canvas.NotFound("environment")
	}
	if _, err := tx.Exec(ctx, `INSERT INTO environments (id, canvas_id, name, is_system, created_by, created_at)
		VALUES (?, ?, ?, true, 'system', ?) ON CONFLICT (canvas_id, name) DO NOTHING`,
		tx.NewID(), canvasID, env.Production, tx.Now); err != nil {
		return nil, err
	}
	return findEnv(ctx, tx, workspaceID, canvasID, name)
}

// FindEnvironment returns the environment p.Name of a live canvas. For
// production it is created on demand, in a write transaction taken only
// when it is missing; any other missing name is NOT_FOUND.
func (s *Store) FindEnvironment(ctx context.Context, p env.FindEnvironmentParams) (*env.Environment, error) {
	var e *env.Environment
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		e, err = findEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.Name)
		return err
	})
	if err != nil || e != nil {
		return e, err
	} else if p.Name != env.Production {
		return nil, canvas.NotFound("environment")
	}
	err = s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		e, err = ensureEnv(ctx, tx, p.WorkspaceID, p.CanvasID, p.Name)
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// ListEnvironments returns the environments of a live canvas, production
// first, then by name, each with its active version.
func (s *Store) ListEnvironments(ctx context.Context, workspaceID, canvasID string) ([]*env.Environment, error) {
	var list []*env.Environment
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		if err := checkCanvas(ctx, tx, workspaceID, canvasID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+envCols+envFrom+` AND e.canvas_id = ? ORDER BY e.is_system DESC, e.name`,
			workspaceID, canvasID)
		list, err = RowsOf(rows, err, func(r Rows) (*env.Environment, error) { return scanEnvironment(r) })
		return err
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// DeleteEnvironment removes a custom environment and its whole history;
// production, or a protected environment (what it serves changes only
// through approved requests), is CONFLICT.
func (s *Store) DeleteEnvironment(ctx context.Context, workspaceID, id string) error {
	return s.writeAudited(ctx, Alone, changeOf("environment.delete", auditEnvironment, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		var system, protected bool
		err := tx.QueryRow(ctx, `SELECT e.is_system, e.protected`+liveEnv+` AND e.id = ?`+s.d.forUpdateOf("e"),
			workspaceID, id).Scan(&system, &protected)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("environment")
		} else if err != nil {
			return err
		} else if system {
			return canvas.Errorf(canvas.ECONFLICT, "The production environment cannot be deleted.")
		} else if protected {
			return canvas.Errorf(canvas.ECONFLICT, "The environment is protected; an admin unprotects it before it can be deleted.")
		}
		// Publications go with their environment (ON DELETE CASCADE).
		_, err = tx.Exec(ctx, `DELETE FROM environments WHERE id = ?`, id)
		return err
	})
}

// SetPolicy sets the protection of an environment of a live canvas and
// returns it. The environment's row is locked (Dialect.ForUpdate) as a
// publish locks it, so a publish decides on the policy committed before
// it or after it, never in between. Unprotecting clears the approvals and
// the experiment. A required experiment's tags must be live tags of the
// canvas.
func (s *Store) SetPolicy(ctx context.Context, p env.PolicyParams) (*env.Environment, error) {
	var out *env.Environment
	err := s.writeAudited(ctx, Alone, changeOf("environment.policy", auditEnvironment, p.WorkspaceID, &p.ID), func(ctx context.Context, tx *Tx) error {
		var canvasID string
		err := tx.QueryRow(ctx, `SELECT e.canvas_id`+liveEnv+` AND e.id = ?`+s.d.forUpdateOf("e"),
			p.WorkspaceID, p.ID).Scan(&canvasID)
		if errors.Is(err, ErrNoRows) {
			return canvas.NotFound("environment")
		} else if err != nil {
			return err
		}
		approvals, experiment := 0, any(nil)
		if p.Protected {
			approvals = p.RequiredApprovals
			if x := p.RequiredExperiment; x != nil {
				if err := checkTags(ctx, tx, s.d, p.WorkspaceID, canvasID, x.TagIDs); err != nil {
					return err
				}
				if experiment, err = jsonText(env.RequiredExperiment{TagIDs: orEmpty(x.TagIDs), MinPassRate: x.MinPassRate}); err != nil {
					return err
				}
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE environments SET protected = ?, required_approvals = ?, required_experiment = ?
			WHERE id = ?`, p.Protected, approvals, experiment, p.ID); err != nil {
			return err
		}
		out, err = scanEnvironment(tx.QueryRow(ctx, qEnvByID, p.WorkspaceID, p.ID))
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkTags returns VALIDATION naming each of ids that is not a live tag
// of the canvas, at /json/requiredExperiment/tagIds/<i>.
func checkTags(ctx context.Context, tx *Tx, d Dialect, workspaceID, canvasID string, ids []string) error {
	rows, err := tx.Query(ctx, `SELECT id FROM test_case_tags WHERE workspace_id = ? AND prompt_id = ?
		AND deleted_at IS NULL AND `+d.InIDs("id"), workspaceID, canvasID, IDs(ids))
	found, err := RowsOf(rows, err, func(r Rows) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	if err != nil {
		return err
	}
	var details []canvas.Detail
	for i, id := range ids {
		if !slices.Contains(found, id) {
			details = append(details, canvas.Detail{Path: fmt.Sprintf("/json/requiredExperiment/tagIds/%d", i),
				Message: "is not a tag of the canvas"})
		}
	}
	if details != nil {
		return canvas.Invalid("Request failed validation.", details...)
	}
	return nil
}
