package sqlstore

import (
	"context"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// messageCols are the columns scanMessage reads, in order, from messages m.
const messageCols = `m.id, m.version_id, m.role, m.content, m.markdown_content, m.idx, m.created_by,
	m.updated_by, m.created_at, m.updated_at, m.deleted_at`

func scanMessage(r Row) (*canvas.Message, error) {
	var m canvas.Message
	return &m, r.Scan(&m.ID, &m.PromptVersionID, &m.Role, &m.Content, &m.MarkdownContent, &m.Index,
		&m.CreatedBy, &m.UpdatedBy, &m.CreatedAt, &m.UpdatedAt, &m.DeletedAt)
}

// liveMessage joins a message (the first parameter) to its version and
// canvas and keeps it only when all three are live and the canvas belongs
// to the workspace (the second).
const liveMessage = ` FROM messages m JOIN versions v ON v.id = m.version_id JOIN canvases c ON c.id = v.canvas_id
	WHERE m.id = ? AND c.workspace_id = ? AND m.deleted_at IS NULL AND v.deleted_at IS NULL AND c.deleted_at IS NULL`

// insertMessage inserts m, setting its id when empty, its timestamps, and
// UpdatedBy to CreatedBy when empty; an id in use is CONFLICT.
func insertMessage(ctx context.Context, tx *Tx, m *canvas.Message) error {
	if m.ID == "" {
		m.ID = tx.NewID()
	}
	if m.UpdatedBy == "" {
		m.UpdatedBy = m.CreatedBy
	}
	m.CreatedAt, m.UpdatedAt, m.DeletedAt = tx.Now, tx.Now, nil
	_, err := tx.Exec(ctx, `INSERT INTO messages (id, version_id, role, content, markdown_content, idx,
		created_by, updated_by, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.PromptVersionID, m.Role, m.Content, nullString(m.MarkdownContent), m.Index,
		m.CreatedBy, m.UpdatedBy, tx.Now, tx.Now)
	return err
}

// replaceMessages makes in the live messages of a version. An input whose
// id names a message of the version (live or not) rewrites that message;
// every other input is inserted; live messages left out are soft-deleted.
func (s *Store) replaceMessages(ctx context.Context, tx *Tx, versionID string, in []canvas.MessageInput, by string) error {
	keep := make(IDs, 0, len(in))
	for _, mi := range in {
		if mi.ID != "" {
			n, err := tx.Exec(ctx, `UPDATE messages SET role = ?, content = ?, markdown_content = ?, idx = ?,
				updated_by = ?, updated_at = ?, deleted_at = NULL WHERE id = ? AND version_id = ?`,
				mi.Role, mi.Content, nullString(mi.MarkdownContent), mi.Index, by, tx.Now, mi.ID, versionID)
			if err != nil {
				return err
			} else if n == 1 {
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
	_, err := tx.Exec(ctx, `UPDATE messages SET deleted_at = ? WHERE version_id = ? AND deleted_at IS NULL
		AND NOT (`+s.d.InIDs("id")+`)`, tx.Now, versionID, keep)
	return err
}

// writePrompt sets the content and markdown content (each when non-nil) of
// the version's prompt message, the live system message at index 0,
// creating it when missing.
func writePrompt(ctx context.Context, tx *Tx, versionID string, content, markdown *string, by string) error {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM messages WHERE version_id = ? AND idx = 0 AND role = ?
		AND deleted_at IS NULL ORDER BY created_at, id LIMIT 1`, versionID, canvas.RoleSystem).Scan(&id)
	if errors.Is(err, ErrNoRows) {
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
	set.add("updated_at", tx.Now)
	if content != nil {
		set.add("content", *content)
	}
	if markdown != nil {
		set.add("markdown_content", *markdown)
	}
	_, err = tx.Exec(ctx, `UPDATE messages SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...)
	return err
}

// checkVersion reports NOT_FOUND unless id names a live version of a live
// canvas of the workspace.
func checkVersion(ctx context.Context, tx *Tx, workspaceID, id string) error {
	_, _, err := versionRow(ctx, tx, workspaceID, id, "")
	return err
}

// CreateMessage inserts m into a live version, setting its id when empty
// and its timestamps; an id in use is CONFLICT, and a version a protected
// environment serves is APPROVAL_REQUIRED (lockEditable).
func (s *Store) CreateMessage(ctx context.Context, workspaceID string, m *canvas.Message) error {
	return s.writeAudited(ctx, Alone, changeOf("prompt-version-message.create", auditMessage, workspaceID, &m.ID), func(ctx context.Context, tx *Tx) error {
		if err := checkVersion(ctx, tx, workspaceID, m.PromptVersionID); err != nil {
			return err
		}
		if err := s.lockEditable(ctx, tx, m.PromptVersionID); err != nil {
			return err
		}
		return insertMessage(ctx, tx, m)
	})
}

// GetMessage returns a live message of a live version.
func (s *Store) GetMessage(ctx context.Context, workspaceID, id string) (*canvas.Message, error) {
	var m *canvas.Message
	err := s.readAlone(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		m, err = getMessage(ctx, tx, workspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

func getMessage(ctx context.Context, tx *Tx, workspaceID, id string) (*canvas.Message, error) {
	m, err := scanMessage(tx.QueryRow(ctx, `SELECT `+messageCols+liveMessage, id, workspaceID))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("message")
	}
	return m, err
}

// ListMessages returns the live messages of a live version ordered by
// index, then creation.
func (s *Store) ListMessages(ctx context.Context, workspaceID, versionID string) ([]*canvas.Message, error) {
	var list []*canvas.Message
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		if err := checkVersion(ctx, tx, workspaceID, versionID); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+messageCols+` FROM messages m
			WHERE m.version_id = ? AND m.deleted_at IS NULL ORDER BY m.idx, m.created_at, m.id`, versionID)
		list, err = RowsOf(rows, err, func(r Rows) (*canvas.Message, error) { return scanMessage(r) })
		return err
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// UpdateMessage applies p.Update to a live message, records p.By as its
// updater, and returns it; a message of a version a protected environment
// serves is APPROVAL_REQUIRED.
func (s *Store) UpdateMessage(ctx context.Context, p canvas.UpdateMessageParams) (*canvas.Message, error) {
	workspaceID, id, upd, by := p.WorkspaceID, p.ID, p.Update, p.By
	var out *canvas.Message
	err := s.writeAudited(ctx, Alone, changeOf("prompt-version-message.update", auditMessage, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		cur, err := getMessage(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if err := s.lockEditable(ctx, tx, cur.PromptVersionID); err != nil {
			return err
		}
		var set setList
		set.add("updated_by", by)
		set.add("updated_at", tx.Now)
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
		if _, err := tx.Exec(ctx, `UPDATE messages SET `+set.sql()+` WHERE id = ?`, append(set.args, id)...); err != nil {
			return err
		}
		out, err = getMessage(ctx, tx, workspaceID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteMessage soft-deletes a live message; a message of a version a
// protected environment serves is APPROVAL_REQUIRED.
func (s *Store) DeleteMessage(ctx context.Context, workspaceID, id string) error {
	return s.writeAudited(ctx, Alone, changeOf("prompt-version-message.delete", auditMessage, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		cur, err := getMessage(ctx, tx, workspaceID, id)
		if err != nil {
			return err
		}
		if err := s.lockEditable(ctx, tx, cur.PromptVersionID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE messages SET deleted_at = ?, updated_at = ? WHERE id = ?`, tx.Now, tx.Now, id)
		return err
	})
}
