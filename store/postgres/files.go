package postgres

import (
	"context"
	"crypto/rand"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Compile-time check that DB implements the vault's Store.
var _ vault.Store = (*DB)(nil)

// fileCols are the columns scanFile reads, in order, from files.
const fileCols = `id, workspace_id, file_name, status, mime_type, size, sha256, blob_key, created_by,
	created_at, uploaded_at, expires_at`

// uploadSecretName names the upload-URL signing key in secrets.
const uploadSecretName = "vault.upload"

// uploadSecretLen is the size of the signing key, in bytes.
const uploadSecretLen = 32

func scanFile(r scanner) (*vault.File, error) {
	var f vault.File
	return &f, r.Scan(&f.ID, &f.WorkspaceID, &f.FileName, &f.Status, &f.MimeType, &f.Size, &f.SHA256,
		&f.BlobKey, &f.CreatedBy, &f.CreatedAt, &f.UploadedAt, &f.ExpiresAt)
}

// fileOrNotFound names a missing file.
func fileOrNotFound(f *vault.File, err error) (*vault.File, error) {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, canvas.NotFound("file")
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CreateFile inserts f and its expiry job in one transaction.
func (db *DB) CreateFile(ctx context.Context, f *vault.File, job *queue.Job) error {
	return db.write(ctx, func(tx *Tx) error {
		if f.ID == "" {
			f.ID = db.NewID()
		}
		f.CreatedAt = tx.now
		f.ExpiresAt = instant(f.ExpiresAt)
		if f.UploadedAt != nil {
			t := instant(*f.UploadedAt)
			f.UploadedAt = &t
		}
		_, err := tx.Exec(ctx, `INSERT INTO files (`+fileCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			f.ID, f.WorkspaceID, f.FileName, f.Status, f.MimeType, f.Size, f.SHA256, f.BlobKey, f.CreatedBy,
			tx.now, f.UploadedAt, f.ExpiresAt)
		if err != nil {
			return translate(err)
		}
		if job != nil {
			if job.RefID == "" {
				job.RefID = f.ID
			}
			return insertJob(ctx, tx, job)
		}
		return nil
	})
}

// GetFile returns a file of the workspace.
func (db *DB) GetFile(ctx context.Context, workspaceID, id string) (*vault.File, error) {
	return fileOrNotFound(scanFile(db.pool.QueryRow(ctx,
		`SELECT `+fileCols+` FROM files WHERE workspace_id = $1 AND id = $2`, workspaceID, id)))
}

// LookupFile returns a file by id alone.
func (db *DB) LookupFile(ctx context.Context, id string) (*vault.File, error) {
	return fileOrNotFound(scanFile(db.pool.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = $1`, id)))
}

// MarkUploaded moves a pending file to uploaded. The status check and the
// update are one statement, so that of two concurrent claims one wins: the
// second waits for the first's row lock, then finds the file uploaded.
func (db *DB) MarkUploaded(ctx context.Context, id string, r vault.UploadResult) (*vault.File, error) {
	var f *vault.File
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		f, err = fileOrNotFound(scanFile(tx.QueryRow(ctx,
			`UPDATE files SET status = $1, mime_type = $2, size = $3, sha256 = $4, blob_key = $5, uploaded_at = $6
			WHERE id = $7 AND status = $8 RETURNING `+fileCols,
			vault.StatusUploaded, r.MimeType, r.Size, r.SHA256, r.BlobKey, tx.now, id, vault.StatusPending)))
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			if _, lerr := fileOrNotFound(scanFile(tx.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = $1`, id))); lerr != nil {
				return lerr
			}
			return canvas.Errorf(canvas.ECONFLICT, "The file was already uploaded.")
		}
		return err
	})
	return f, err
}

// DeleteFile removes a file of the workspace and returns it.
func (db *DB) DeleteFile(ctx context.Context, workspaceID, id string) (*vault.File, error) {
	var f *vault.File
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		f, err = fileOrNotFound(scanFile(tx.QueryRow(ctx,
			`DELETE FROM files WHERE workspace_id = $1 AND id = $2 RETURNING `+fileCols, workspaceID, id)))
		return err
	})
	return f, err
}

// DeletePendingFile removes a file while it is pending and returns it; an
// uploaded file is CONFLICT.
func (db *DB) DeletePendingFile(ctx context.Context, id string) (*vault.File, error) {
	var f *vault.File
	err := db.write(ctx, func(tx *Tx) error {
		var err error
		f, err = fileOrNotFound(scanFile(tx.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = $1 FOR UPDATE`, id)))
		if err != nil {
			return err
		}
		if f.Status != vault.StatusPending {
			return canvas.Errorf(canvas.ECONFLICT, "The file was uploaded.")
		}
		_, err = tx.Exec(ctx, `DELETE FROM files WHERE id = $1`, id)
		return err
	})
	return f, err
}

// UploadSecret returns the upload-URL signing key, creating it at random
// on first use. Processes creating it at once agree: the first insert wins
// (the others' wait for it, then do nothing) and all read the stored value.
func (db *DB) UploadSecret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := db.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, uploadSecretName).Scan(&secret)
	if err == nil {
		return secret, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return nil, err
	}
	fresh := make([]byte, uploadSecretLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	err = db.write(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO secrets (name, value, created_at) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO NOTHING`, uploadSecretName, fresh, tx.now); err != nil {
			return translate(err)
		}
		return tx.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, uploadSecretName).Scan(&secret)
	})
	return secret, err
}

// ListFiles returns one page of the files f selects, newest first (seq, the
// order of insertion, breaks ties between files created at the same
// instant), and how many f selects in all, read in one snapshot. The index
// files_workspace serves them in order.
func (db *DB) ListFiles(ctx context.Context, f vault.FileFilter) ([]*vault.File, int, error) {
	var p params
	where := `workspace_id = ` + p.add(f.WorkspaceID)
	for _, c := range []struct{ col, v string }{{"status", f.Status}, {"created_by", f.CreatedBy}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ` + p.add(c.v)
		}
	}
	return listPage(ctx, db, listQuery{cols: fileCols, from: `files`, where: where, args: p,
		order: `created_at DESC, seq DESC`, limit: f.Limit, offset: f.Offset}, func(r pgx.Rows) (*vault.File, error) { return scanFile(r) })
}
