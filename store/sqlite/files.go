package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"

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

func scanFile(r interface{ Scan(...any) error }) (*vault.File, error) {
	var f vault.File
	return &f, r.Scan(&f.ID, &f.WorkspaceID, &f.FileName, &f.Status, &f.MimeType, &f.Size, &f.SHA256,
		&f.BlobKey, &f.CreatedBy, timeCol{&f.CreatedAt}, nullTimeCol{&f.UploadedAt}, timeCol{&f.ExpiresAt})
}

// fileOrNotFound names a missing file.
func fileOrNotFound(f *vault.File, err error) (*vault.File, error) {
	if errors.Is(err, sql.ErrNoRows) {
		return nil, canvas.NotFound("file")
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}

// CreateFile inserts f and its expiry job in one transaction.
func (db *DB) CreateFile(ctx context.Context, f *vault.File, job *queue.Job) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if f.ID == "" {
		f.ID = db.NewID()
	}
	f.CreatedAt = tx.now
	f.ExpiresAt = f.ExpiresAt.UTC()
	_, err = tx.exec(ctx, `INSERT INTO files (`+fileCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, f.WorkspaceID, f.FileName, f.Status, f.MimeType, f.Size, f.SHA256, f.BlobKey, f.CreatedBy,
		formatTime(tx.now), nullTime(f.UploadedAt), formatTime(f.ExpiresAt))
	if err != nil {
		return translate(err)
	}
	if job != nil {
		if job.RefID == "" {
			job.RefID = f.ID
		}
		if err := insertJob(ctx, tx, job); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// GetFile returns a file of the workspace.
func (db *DB) GetFile(ctx context.Context, workspaceID, id string) (*vault.File, error) {
	return fileOrNotFound(scanFile(db.read.QueryRowContext(ctx,
		`SELECT `+fileCols+` FROM files WHERE workspace_id = ? AND id = ?`, workspaceID, id)))
}

// LookupFile returns a file by id alone.
func (db *DB) LookupFile(ctx context.Context, id string) (*vault.File, error) {
	return fileOrNotFound(scanFile(db.read.QueryRowContext(ctx, `SELECT `+fileCols+` FROM files WHERE id = ?`, id)))
}

// MarkUploaded moves a pending file to uploaded. The status check and the
// update are one statement, so that of two concurrent claims one wins.
func (db *DB) MarkUploaded(ctx context.Context, id string, r vault.UploadResult) (*vault.File, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	f, err := fileOrNotFound(scanFile(tx.queryRow(ctx,
		`UPDATE files SET status = ?, mime_type = ?, size = ?, sha256 = ?, blob_key = ?, uploaded_at = ?
		WHERE id = ? AND status = ? RETURNING `+fileCols,
		vault.StatusUploaded, r.MimeType, r.Size, r.SHA256, r.BlobKey, formatTime(tx.now), id, vault.StatusPending)))
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		if _, lerr := fileOrNotFound(scanFile(tx.queryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = ?`, id))); lerr != nil {
			return nil, lerr
		}
		return nil, canvas.Errorf(canvas.ECONFLICT, "The file was already uploaded.")
	} else if err != nil {
		return nil, err
	}
	return f, tx.Commit()
}

// DeleteFile removes a file of the workspace and returns it.
func (db *DB) DeleteFile(ctx context.Context, workspaceID, id string) (*vault.File, error) {
	return db.deleteFile(ctx, `DELETE FROM files WHERE workspace_id = ? AND id = ? RETURNING `+fileCols, workspaceID, id)
}

// DeletePendingFile removes a file while it is pending and returns it; an
// uploaded file is CONFLICT.
func (db *DB) DeletePendingFile(ctx context.Context, id string) (*vault.File, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	f, err := fileOrNotFound(scanFile(tx.queryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = ?`, id)))
	if err != nil {
		return nil, err
	}
	if f.Status != vault.StatusPending {
		return nil, canvas.Errorf(canvas.ECONFLICT, "The file was uploaded.")
	}
	if _, err := tx.exec(ctx, `DELETE FROM files WHERE id = ?`, id); err != nil {
		return nil, err
	}
	return f, tx.Commit()
}

func (db *DB) deleteFile(ctx context.Context, q string, args ...any) (*vault.File, error) {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	f, err := fileOrNotFound(scanFile(tx.queryRow(ctx, q, args...)))
	if err != nil {
		return nil, err
	}
	return f, tx.Commit()
}

// UploadSecret returns the upload-URL signing key, creating it at random
// on first use. Two processes creating it at once agree: the first insert
// wins and both read the stored value.
func (db *DB) UploadSecret(ctx context.Context) ([]byte, error) {
	var secret []byte
	err := db.read.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, uploadSecretName).Scan(&secret)
	if err == nil {
		return secret, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	fresh := make([]byte, uploadSecretLen)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	if _, err := tx.exec(ctx, `INSERT OR IGNORE INTO secrets (name, value, created_at) VALUES (?, ?, ?)`,
		uploadSecretName, fresh, formatTime(tx.now)); err != nil {
		return nil, translate(err)
	}
	if err := tx.queryRow(ctx, `SELECT value FROM secrets WHERE name = ?`, uploadSecretName).Scan(&secret); err != nil {
		return nil, err
	}
	return secret, tx.Commit()
}

// ListFiles returns one page of the files f selects, newest first (the
// rowid, the order of insertion, breaks ties between files created at the
// same instant), and how many f selects in all, read in one snapshot. The
// index files_workspace serves them in order.
func (db *DB) ListFiles(ctx context.Context, f vault.FileFilter) ([]*vault.File, int, error) {
	where := `workspace_id = ?`
	args := []any{f.WorkspaceID}
	for _, c := range []struct{ col, v string }{{"status", f.Status}, {"created_by", f.CreatedBy}} {
		if c.v != "" {
			where += ` AND ` + c.col + ` = ?`
			args = append(args, c.v)
		}
	}
	return listPage(ctx, db, listQuery{cols: fileCols, from: `files`, where: where, args: args,
		order: `created_at DESC, rowid DESC`, limit: f.Limit, offset: f.Offset}, func(r *sql.Rows) (*vault.File, error) { return scanFile(r) })
}
