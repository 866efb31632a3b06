package sqlstore

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Compile-time check that Store implements the vault's Store.
var _ vault.Store = (*Store)(nil)

// fileCols are the columns scanFile reads, in order, from files.
const fileCols = `id, workspace_id, file_name, status, mime_type, size, sha256, blob_key, created_by,
	created_at, uploaded_at, expires_at`

// uploadSecretName names the upload-URL signing key in secrets.
const uploadSecretName = "vault.upload"

// uploadSecretLen is the size of the signing key, in bytes.
const uploadSecretLen = 32

func scanFile(r Row) (*vault.File, error) {
	var f vault.File
	return &f, r.Scan(&f.ID, &f.WorkspaceID, &f.FileName, &f.Status, &f.MimeType, &f.Size, &f.SHA256,
		&f.BlobKey, &f.CreatedBy, &f.CreatedAt, &f.UploadedAt, &f.ExpiresAt)
}

// fileOrNotFound names a missing file.
func fileOrNotFound(f *vault.File, err error) (*vault.File, error) {
	if errors.Is(err, ErrNoRows) {
		return nil, canvas.NotFound("file")
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CreateFile inserts f and its expiry job in one transaction.
func (s *Store) CreateFile(ctx context.Context, f *vault.File, job *queue.Job) error {
	return s.writeAudited(ctx, Alone, changeOf("file.create", auditFile, f.WorkspaceID, &f.ID), func(ctx context.Context, tx *Tx) error {
		if f.ID == "" {
			f.ID = tx.NewID()
		}
		f.CreatedAt = tx.Now
		f.ExpiresAt = s.d.Instant(f.ExpiresAt)
		if f.UploadedAt != nil {
			t := s.d.Instant(*f.UploadedAt)
			f.UploadedAt = &t
		}
		if _, err := tx.Exec(ctx, `INSERT INTO files (`+fileCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			f.ID, f.WorkspaceID, f.FileName, f.Status, f.MimeType, f.Size, f.SHA256, f.BlobKey, f.CreatedBy,
			tx.Now, f.UploadedAt, f.ExpiresAt); err != nil {
			return err
		}
		if job != nil {
			if job.RefID == "" {
				job.RefID = f.ID
			}
			return s.insertJob(ctx, tx, job)
		}
		return nil
	})
}

// GetFile returns a file of the workspace.
func (s *Store) GetFile(ctx context.Context, workspaceID, id string) (*vault.File, error) {
	return getOne(ctx, s, "file", scanFile, `SELECT `+fileCols+` FROM files WHERE workspace_id = ? AND id = ?`, workspaceID, id)
}

// LookupFile returns a file by id alone.
func (s *Store) LookupFile(ctx context.Context, id string) (*vault.File, error) {
	return getOne(ctx, s, "file", scanFile, `SELECT `+fileCols+` FROM files WHERE id = ?`, id)
}

// MarkUploaded moves a pending file to uploaded. The status check and the
// update are one statement, so that of two concurrent claims one wins: on
// Postgres the second waits for the first's row lock, then finds the file
// uploaded.
func (s *Store) MarkUploaded(ctx context.Context, id string, r vault.UploadResult) (*vault.File, error) {
	var f *vault.File
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		f, err = fileOrNotFound(scanFile(tx.QueryRow(ctx,
			`UPDATE files SET status = ?, mime_type = ?, size = ?, sha256 = ?, blob_key = ?, uploaded_at = ?
			WHERE id = ? AND status = ? RETURNING `+fileCols,
			vault.StatusUploaded, r.MimeType, r.Size, r.SHA256, r.BlobKey, tx.Now, id, vault.StatusPending)))
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			if _, lerr := fileOrNotFound(scanFile(tx.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = ?`, id))); lerr != nil {
				return lerr
			}
			return canvas.Errorf(canvas.ECONFLICT, "The file was already uploaded.")
		}
		return err
	})
	return f, err
}

// DeleteFile removes a file of the workspace and returns it.
func (s *Store) DeleteFile(ctx context.Context, workspaceID, id string) (*vault.File, error) {
	var f *vault.File
	err := s.writeAudited(ctx, Alone, changeOf("file.delete", auditFile, workspaceID, &id), func(ctx context.Context, tx *Tx) error {
		var err error
		f, err = fileOrNotFound(scanFile(tx.QueryRow(ctx,
			`DELETE FROM files WHERE workspace_id = ? AND id = ? RETURNING `+fileCols, workspaceID, id)))
		return err
	})
	return f, err
}

// DeletePendingFile removes a file while it is pending and returns it; an
// uploaded file is CONFLICT.
func (s *Store) DeletePendingFile(ctx context.Context, id string) (*vault.File, error) {
	var f *vault.File
	err := s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		var err error
		f, err = fileOrNotFound(scanFile(tx.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = ?`+s.d.ForUpdate(), id)))
		if err != nil {
			return err
		}
		if f.Status != vault.StatusPending {
			return canvas.Errorf(canvas.ECONFLICT, "The file was uploaded.")
		}
		_, err = tx.Exec(ctx, `DELETE FROM files WHERE id = ?`, id)
		return err
	})
	return f, err
}

// UploadSecret returns the upload-URL signing key, creating it at random
// on first use. Processes creating it at once agree: the first insert wins
// (the others' wait for it, then do nothing) and all read the stored value.
func (s *Store) UploadSecret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		return tx.QueryRow(ctx, `SELECT value FROM secrets WHERE name = ?`, uploadSecretName).Scan(&secret)
	})
	if err == nil {
		return secret, nil
	} else if !errors.Is(err, ErrNoRows) {
		return nil, err
	}
	fresh := make([]byte, uploadSecretLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	err = s.write(ctx, Alone, func(ctx context.Context, tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES (?, ?, ?)
			ON CONFLICT (name) DO NOTHING`, uploadSecretName, fresh, tx.Now); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM secrets WHERE name = ?`, uploadSecretName).Scan(&secret)
	})
	return secret, err
}

// ListFiles returns one page of the files f selects, newest first (the
// order of insertion, Postgres's seq or SQLite's rowid, breaks ties
// between files created at the same instant), and how many f selects in
// all, read in one snapshot. The index files_workspace serves them in
// order.
func (s *Store) ListFiles(ctx context.Context, f vault.FileFilter) ([]*vault.File, int, error) {
	where := `workspace_id = ?`
	args := []any{f.WorkspaceID}
	for _, c := range []struct{ col, v string }{{"status", f.Status}, {"created_by", f.CreatedBy}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	order := `created_at DESC, rowid DESC`
	if s.d.Postgres {
		order = `created_at DESC, seq DESC`
	}
	return listPage(ctx, s, listQuery{cols: fileCols, from: `files`, where: where, args: args,
		order: order, limit: f.Limit, offset: f.Offset}, func(r Rows) (*vault.File, error) { return scanFile(r) })
}
