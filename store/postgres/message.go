package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// messageCols are the columns scanMessage reads, in order, from messages m.
const messageCols = `m.id, m.version_id, m.role, m.content, m.markdown_content, m.idx, m.created_by,
	m.updated_by, m.created_at, m.updated_at, m.deleted_at`

func scanMessage(r scanner) (*canvas.Message, error) {
	var m canvas.Message
	return &m, r.Scan(&m.ID, &m.PromptVersionID, &m.Role, &m.Content, &m.MarkdownContent, &m.Index,
		&m.CreatedBy, &m.UpdatedBy, &m.CreatedAt, &m.UpdatedAt, &m.DeletedAt)
}

// liveMessage joins a message ($1) to its version and canvas and keeps it
// only when all three are live and the canvas belongs to the workspace
// ($2).
const liveMessage = ` FROM messages m JOIN versions v ON v.id = m.version_id JOIN canvases c ON c.id = v.canvas_id
	WHERE m.id = $1 AND c.workspace_id = $2 AND m.deleted_at IS NULL AND v.deleted_at IS NULL AND c.deleted_at IS NULL`

// insertMessage inserts m, setting its id when empty, its timestamps, and
// UpdatedBy to CreatedBy when empty; an id in use is CONFLICT.
func insertMessage(ctx context.Context, tx *Tx, m *canvas.Message) error {
	if m.ID == "" {
		m.ID = tx.db.NewID()
	}
	if m.UpdatedBy == "" {
		m.UpdatedBy = m.CreatedBy
	}
	m.CreatedAt, m.UpdatedAt, m.DeletedAt = tx.now, tx.now, nil
	_, err := tx.Exec(ctx, `INSERT INTO messages (id, version_id, role, content, markdown_content, idx,
		created_by, updated_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		m.ID, m.PromptVersionID, m.Role, m.Content, nullString(m.MarkdownContent), m.Index,
		m.CreatedBy, m.UpdatedBy, tx.now)
	return translate(err)
}

// replaceMessages makes in the live messages of a version. An input whose
// id names a message of the version (live or not) rewrites that message;
// every other input is inserted; live messages left out are soft-deleted.
func replaceMessages(ctx context.Context, tx *Tx, versionID string, in []canvas.MessageInput, by string) error {
	keep := make([]string, 0, len(in))
	for _, mi := range in {
		if mi.ID != "" {
			tag, err := tx.Exec(ctx, `UPDATE messages SET role = $1, content = $2, markdown_content = $3, idx = $4,
				updated_by = $5, updated_at = $6, deleted_at = NULL WHERE id = $7 AND version_id = $8`,
				mi.Role, mi.Content, nullString(mi.MarkdownContent), mi.Index, by, tx.now, mi.ID, versionID)
			if err != nil {
				return err
			} else if tag.RowsAffected() == 1 {
				keep = append(keep, mi.ID)
				continue
			}
		}
		m := canvas.Message{ID: mi.ID, PromptVersionID: versionID, Role: mi.Role, Content: mi.Content,
			MarkdownContent: mi.MarkdownContent, Index: mi.Index, CreatedBy: by}
		if err := insertMessage(ctx, tx, &m); err != nil {
			return err
		}
		keep = append(keep, m.ID)
	}
	_, err := tx.Exec(ctx, `UPDATE messages SET deleted_at = $1 WHERE version_id = $2 AND deleted_at IS NULL
		AND NOT (id = ANY($3))`, tx.now, versionID, keep)
	return err
}

// writePrompt sets the content and markdown content (each when non-nil) of
// the version's prompt message, the live system message at index 0,
// creating it when missing.
func writePrompt(ctx context.Context, tx *Tx, versionID string, content, markdown *string, by string) error {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM messages WHERE version_id = $1 AND idx = 0 AND role = $2
		AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1`, versionID, canvas.RoleSystem).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		m := canvas.Message{PromptVersionID: versionID, Role: canvas.RoleSystem, MarkdownContent: markdown, CreatedBy: by}
		if content != nil {
			m.Content = *content
		}
		return insertMessage(ctx, tx, &m)
	} else if err != nil {
		return err
	}
	var set setList
	set.add("updated_by", by)
	set.add("updated_at", tx.now)
	if content != nil {
		set.add("content", *content)
	}
	if markdown != nil {
		set.add("markdown_content", *markdown)
	}
	_, err = tx.Exec(ctx, `UPDATE messages SET `+set.sql()+` WHERE id = `+set.args.add(id), set.args...)
	return err
}

// checkVersion reports NOT_FOUND unless id names a live version of a live
// canvas of the workspace.
func checkVersion(ctx context.Context, tx *Tx, workspaceID, id string) error {
	_, _, err := versionRow(ctx, tx, workspaceID, id)
	return err
}

// CreateMessage inserts m into a live version, setting its id when empty
// and its timestamps; an id in use is CONFLICT.
func (db *DB) CreateMessage(ctx context.Context, workspaceID string, m *canvas.Message) error {
	return db.write(ctx, func(tx *Tx) error {
		if err := checkVersion(ctx, tx, workspaceID, m.PromptVersionID); err != nil {
			return err
		}
		return insertMessage(ctx, tx, m)
	})
}

// GetMessage returns a live message of a live version.
func (db *DB) GetMessage(ctx context.Context, workspaceID, id string) (*canvas.Message, error) {
	return getMessage(ctx, db.pool, workspaceID, id)
}

// querier runs one-row queries: the pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func getMessage(ctx context.Context, q querier, workspaceID, id string) (*canvas.Message, error) {
	m, err := scanMessage(q.QueryRow(ctx, `SELECT `+messageCols+liveMessage, id, workspaceID))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("message")
	}
	return m, err
}

// ListMessages returns the live messages of a live version ordered by
// index, then creation.
func (db *DB) ListMessages(ctx context.Context, workspaceID, versionID string) ([]*canvas.Message, error) {
	var list []*canvas.Message
	err := db.read(ctx, func(tx *Tx) error {
		if err := checkVersion(ctx, tx, workspaceID, versionID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+messageCols+` FROM messages m
			WHERE m.version_id = $1 AND m.deleted_at IS NULL ORDER BY m.idx, m.created_at, m.id`, versionID)
		list, err = rowsOf(rows, err, func(r pgx.Rows) (*canvas.Message, error) { return scanMessage(r) })
		return err
	})
	return list, err
}

// UpdateMessage applies p.Update to a live message, records p.By as its
// updater, and returns it.
func (db *DB) UpdateMessage(ctx context.Context, p canvas.UpdateMessageParams) (*canvas.Message, error) {
	workspaceID, id, upd, by := p.WorkspaceID, p.ID, p.Update, p.By
	var out *canvas.Message
	err := db.write(ctx, func(tx *Tx) error {
		if _, err := getMessage(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		var set setList
		set.add("updated_by", by)
		set.add("updated_at", tx.now)
		if upd.Role != nil {
			set.add("role", *upd.Role)
		}
		if upd.Content != nil {
			set.add("content", *upd.Content)
		}
		if upd.MarkdownContent != nil {
			set.add("markdown_content", *upd.MarkdownContent)
		}
		if upd.Index != nil {
			set.add("idx", *upd.Index)
		}
		if _, err := tx.Exec(ctx, `UPDATE messages SET `+set.sql()+` WHERE id = `+set.args.add(id), set.args...); err != nil {
			return err
		}
		var err error
		out, err = getMessage(ctx, tx, workspaceID, id)
		return err
	})
	return out, err
}

// DeleteMessage soft-deletes a live message.
func (db *DB) DeleteMessage(ctx context.Context, workspaceID, id string) error {
	return db.write(ctx, func(tx *Tx) error {
		if _, err := getMessage(ctx, tx, workspaceID, id); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE messages SET deleted_at = $1, updated_at = $1 WHERE id = $2`, tx.now, id)
		return err
	})
}
