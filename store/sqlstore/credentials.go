package sqlstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/model"
)

// Compile-time check that Store implements the credential package's store.
var _ credential.Store = (*Store)(nil)

// credentialCols are the columns scanCredential reads, in order.
const credentialCols = `id, workspace_id, name, provider, base_url, project_ids, settings, key_hint, sealed, nonce,
	kek_id, created_at, updated_at, created_by, updated_by, last_used_at, deleted_at`

func scanCredential(r Row) (*credential.Record, error) {
	var c credential.Record
	var projects *string
	var sealed, nonce []byte
	var kek *string
	err := r.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Provider, &c.BaseURL, &projects, jsonCol{&c.Settings},
		&c.KeyHint, &sealed, &nonce, &kek, &c.CreatedAt, &c.UpdatedAt, &c.CreatedBy, &c.UpdatedBy,
		&c.LastUsedAt, &c.DeletedAt)
	if err != nil {
		return nil, err
	}
	if projects != nil {
		if err := (jsonCol{&c.ProjectIDs}).Scan(*projects); err != nil {
			return nil, err
		}
		c.ProjectIDs = orEmpty(c.ProjectIDs)
	}
	if sealed != nil && kek != nil {
		c.Sealed = &credential.Sealed{Ciphertext: sealed, Nonce: nonce, KeyID: *kek}
	}
	return &c, nil
}

// sealedCols returns the column values of an optional sealed key.
func sealedCols(s *credential.Sealed) (ciphertext, nonce, kek any) {
	if s == nil {
		return nil, nil, nil
	}
	return s.Ciphertext, s.Nonce, s.KeyID
}

// projectsCol is the column value of a credential's projects: NULL for
// every project.
func projectsCol(ids []string) (any, error) {
	if ids == nil {
		return nil, nil
	}
	return jsonText(ids)
}

// credentialNameTaken returns CONFLICT when a live credential of the
// workspace other than id is named name. Writes of one workspace's
// credentials take turns on its lock, so that the check holds until the
// commit; the unique index stands behind it.
func credentialNameTaken(ctx context.Context, tx *Tx, workspaceID, id, name string) error {
	if err := tx.Lock(ctx, "credentials:"+workspaceID); err != nil {
		return err
	}
	var taken bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM credentials
		WHERE workspace_id = ? AND name = ? AND id <> ? AND deleted_at IS NULL)`, workspaceID, name, id).Scan(&taken); err != nil {
		return err
	}
	if taken {
		return canvas.Errorf(canvas.ECONFLICT, "A credential named %q already exists in the workspace.", name)
	}
	return nil
}

// CreateCredential inserts r, whose ID is set.
func (s *Store) CreateCredential(ctx context.Context, r *credential.Record) error {
	projects, err := projectsCol(r.ProjectIDs)
	if err != nil {
		return err
	}
	settings, err := jsonText(r.Settings)
	if err != nil {
		return err
	}
	ciphertext, nonce, kek := sealedCols(r.Sealed)
	return s.writeAudited(ctx, Alone, changeOf("credential.create", auditCredential, r.WorkspaceID, &r.ID), func(ctx context.Context, tx *Tx) error {
		if err := credentialNameTaken(ctx, tx, r.WorkspaceID, r.ID, r.Name); err != nil {
			return err
		}
		r.CreatedAt, r.UpdatedAt = tx.Now, tx.Now
		_, err := tx.Exec(ctx, `INSERT INTO credentials (id, workspace_id, name, provider, base_url, project_ids,
			settings, key_hint, sealed, nonce, kek_id, created_at, updated_at, created_by, updated_by)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.WorkspaceID, r.Name, r.Provider, nullString(r.BaseURL), projects, settings, nullString(r.KeyHint),
			ciphertext, nonce, kek, tx.Now, tx.Now, r.CreatedBy, r.UpdatedBy)
		return err
	})
}

// GetCredential returns a live credential of the workspace.
func (s *Store) GetCredential(ctx context.Context, workspaceID, id string) (*credential.Record, error) {
	return getOne(ctx, s, "credential", scanCredential, `SELECT `+credentialCols+` FROM credentials
		WHERE workspace_id = ? AND id = ? AND deleted_at IS NULL`, workspaceID, id)
}

// ListCredentials returns one page of the workspace's live credentials
// that p selects, oldest first, and how many it selects in all.
func (s *Store) ListCredentials(ctx context.Context, p credential.ListParams) ([]*credential.Record, int, error) {
	where := `workspace_id = ? AND deleted_at IS NULL`
	args := []any{p.WorkspaceID}
	if p.Provider != "" {
		where += ` AND provider = ?`
		args = append(args, p.Provider)
	}
	if p.ProjectID != "" {
		where += ` AND (project_ids IS NULL OR ` + s.d.JSONArrayHas("project_ids") + `)`
		args = append(args, p.ProjectID)
	}
	if p.Visible != nil {
		conds := []string{`project_ids IS NULL`}
		for _, id := range p.Visible {
			conds = append(conds, s.d.JSONArrayHas("project_ids"))
			args = append(args, id)
		}
		where += ` AND (` + strings.Join(conds, ` OR `) + `)`
	}
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return listPage(ctx, s, listQuery{cols: credentialCols, from: `credentials`, where: where, args: args,
		order: `created_at, id`, limit: limit, offset: p.Offset}, func(r Rows) (*credential.Record, error) {
		return scanCredential(r)
	})
}

// UpdateCredential applies upd to a live credential and returns it. The
// row is locked while it is read and rewritten.
func (s *Store) UpdateCredential(ctx context.Context, workspaceID, id string, upd credential.Update) (*credential.Record, error) {
	var out *credential.Record
	err := s.writeAudited(ctx, Alone, changeOf("credential.update", auditCredential, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		r, err := getCredential(ctx, tx, workspaceID, id, s.d.ForUpdate())
		if err != nil {
			return err
		}
		if upd.Name != nil && *upd.Name != r.Name {
			if err := credentialNameTaken(ctx, tx, workspaceID, id, *upd.Name); err != nil {
				return err
			}
			r.Name = *upd.Name
		}
		if upd.BaseURL != nil {
			r.BaseURL = *upd.BaseURL
		}
		if upd.ProjectIDs != nil {
			r.ProjectIDs = *upd.ProjectIDs
		}
		if upd.Settings != nil {
			r.Settings = *upd.Settings
		}
		switch {
		case upd.Sealed != nil:
			r.Sealed, r.KeyHint = upd.Sealed, upd.KeyHint
		case upd.ClearKey:
			r.Sealed, r.KeyHint = nil, nil
		}
		projects, err := projectsCol(r.ProjectIDs)
		if err != nil {
			return err
		}
		settings, err := jsonText(r.Settings)
		if err != nil {
			return err
		}
		ciphertext, nonce, kek := sealedCols(r.Sealed)
		r.UpdatedAt, r.UpdatedBy = tx.Now, upd.UpdatedBy
		if _, err := tx.Exec(ctx, `UPDATE credentials SET name = ?, base_url = ?, project_ids = ?, settings = ?,
			key_hint = ?, sealed = ?, nonce = ?, kek_id = ?, updated_at = ?, updated_by = ? WHERE id = ?`,
			r.Name, nullString(r.BaseURL), projects, settings, nullString(r.KeyHint), ciphertext, nonce, kek,
			tx.Now, r.UpdatedBy, id); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, err
}

// getCredential reads a live credential inside tx; lock is appended to the
// query (a row-lock clause, or nothing).
func getCredential(ctx context.Context, tx *Tx, workspaceID, id, lock string) (*credential.Record, error) {
	r, err := scanCredential(tx.QueryRow(ctx, `SELECT `+credentialCols+` FROM credentials
		WHERE workspace_id = ? AND id = ? AND deleted_at IS NULL`+lock, workspaceID, id))
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("credential")
	}
	return r, err
}

// DeleteCredential marks a live credential deleted and forgets its sealed
// key and hint.
func (s *Store) DeleteCredential(ctx context.Context, workspaceID, id, by string) error {
	return s.writeAudited(ctx, Alone, changeOf("credential.delete", auditCredential, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE credentials SET deleted_at = ?, updated_at = ?, updated_by = ?,
			sealed = NULL, nonce = NULL, kek_id = NULL, key_hint = NULL
			WHERE workspace_id = ? AND id = ? AND deleted_at IS NULL`, tx.Now, tx.Now, by, workspaceID, id)
		if err != nil {
			return err
		} else if n == 0 {
			return canvas.NotFound("credential")
		}
		return nil
	})
}

// TouchCredential moves a live credential's last_used_at forward to at.
func (s *Store) TouchCredential(ctx context.Context, workspaceID, id string, at time.Time) error {
	at = s.d.Instant(at)
	return s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		_, err := tx.Exec(ctx, `UPDATE credentials SET last_used_at = ?
			WHERE workspace_id = ? AND id = ? AND deleted_at IS NULL AND (last_used_at IS NULL OR last_used_at < ?)`,
			at, workspaceID, id, at)
		return err
	})
}

// SealedCredentials returns at most limit live credentials of any
// workspace with a key sealed under another key than keyID and an id
// after afterID, by id.
func (s *Store) SealedCredentials(ctx context.Context, keyID, afterID string, limit int) ([]*credential.Record, error) {
	return getAll(ctx, s, scanCredential, `SELECT `+credentialCols+` FROM credentials
		WHERE sealed IS NOT NULL AND kek_id <> ? AND id > ? AND deleted_at IS NULL ORDER BY id LIMIT ?`,
		keyID, afterID, limit)
}

// ResealCredential replaces the sealed key old (matched by key id and
// nonce) by new, and reports whether the row still held old.
func (s *Store) ResealCredential(ctx context.Context, workspaceID, id string, old, new credential.Sealed) (bool, error) {
	var ok bool
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `UPDATE credentials SET sealed = ?, nonce = ?, kek_id = ?
			WHERE workspace_id = ? AND id = ? AND kek_id = ? AND nonce = ? AND deleted_at IS NULL`,
			new.Ciphertext, new.Nonce, new.KeyID, workspaceID, id, old.KeyID, old.Nonce)
		ok = n == 1
		return err
	})
	return ok, err
}

// priceCols are the columns scanPrice reads, in order.
const priceCols = `workspace_id, name, provider, input_per_million, output_per_million, updated_at, updated_by`

func scanPrice(r Row) (*credential.PriceOverride, error) {
	var p credential.PriceOverride
	err := r.Scan(&p.WorkspaceID, &p.Name, &p.Provider, &p.InputPerMillion, &p.OutputPerMillion, &p.UpdatedAt, &p.UpdatedBy)
	p.Source = model.SourceWorkspace
	return &p, err
}

// ListModelPrices returns the workspace's price overrides, by name.
func (s *Store) ListModelPrices(ctx context.Context, workspaceID string) ([]*credential.PriceOverride, error) {
	return getAll(ctx, s, scanPrice, `SELECT `+priceCols+` FROM model_prices WHERE workspace_id = ? ORDER BY name`,
		workspaceID)
}

// SetModelPrice creates or replaces an override.
func (s *Store) SetModelPrice(ctx context.Context, p *credential.PriceOverride) error {
	return s.writeAudited(ctx, Alone, changeOf("model-price.set", auditPrice, p.WorkspaceID, &p.Name), func(ctx context.Context, tx *Tx) error {
		p.UpdatedAt = tx.Now
		_, err := tx.Exec(ctx, `INSERT INTO model_prices (`+priceCols+`) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (workspace_id, name) DO UPDATE SET provider = excluded.provider,
			input_per_million = excluded.input_per_million, output_per_million = excluded.output_per_million,
			updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
			p.WorkspaceID, p.Name, p.Provider, p.InputPerMillion, p.OutputPerMillion, tx.Now, p.UpdatedBy)
		return err
	})
}

// DeleteModelPrice removes an override; none is NOT_FOUND.
func (s *Store) DeleteModelPrice(ctx context.Context, workspaceID, name string) error {
	return s.writeAudited(ctx, Alone, changeOf("model-price.delete", auditPrice, workspaceID, &name), func(ctx context.Context, tx *Tx) error {
		n, err := tx.Exec(ctx, `DELETE FROM model_prices WHERE workspace_id = ? AND name = ?`, workspaceID, name)
		if err != nil {
			return err
		} else if n == 0 {
			return canvas.NotFound("model price override")
		}
		return nil
	})
}
