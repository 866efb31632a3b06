package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/store"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// PendingFile creates a pending file of the fixture's workspace with its
// expiry job, and returns both.
func (f *fixture) PendingFile(name string) (*vault.File, *queue.Job) {
	f.t.Helper()
	file := &vault.File{FileName: name, Status: vault.StatusPending, WorkspaceID: f.ws.ID, CreatedBy: "alice",
		ExpiresAt: time.Now().Add(15 * time.Minute).Truncate(time.Second)}
	job := &queue.Job{WorkspaceID: f.ws.ID, Kind: vault.JobKindExpire, RunAt: file.ExpiresAt.Add(time.Minute)}
	require.NoError(f.t, f.s.CreateFile(f.ctx, file, job))
	return file, job
}

// uploadOf returns the metadata of a stored upload of "hello" under key.
func uploadOf(key string) vault.UploadResult {
	return vault.UploadResult{MimeType: "text/plain; charset=utf-8", Size: 5,
		SHA256: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", BlobKey: key}
}

func testFiles(t *testing.T, newStore func(t *testing.T) store.Store) {
	run(t, newStore, "CreateWithJob", func(t *testing.T, f *fixture) {
		file, job := f.PendingFile("notes.txt")
		require.NotEmpty(t, file.ID)
		assert.False(t, file.CreatedAt.IsZero())

		got, err := f.s.GetFile(f.ctx, f.ws.ID, file.ID)
		require.NoError(t, err)
		assert.Equal(t, "notes.txt", got.FileName)
		assert.Equal(t, vault.StatusPending, got.Status)
		assert.Equal(t, "alice", got.CreatedBy)
		assert.Nil(t, got.UploadedAt)
		assert.True(t, file.ExpiresAt.Equal(got.ExpiresAt))
		assert.True(t, file.CreatedAt.Equal(got.CreatedAt))

		j, err := f.s.GetJob(f.ctx, job.ID)
		require.NoError(t, err)
		assert.Equal(t, file.ID, j.RefID, "the expiry job serves the file")
		assert.Equal(t, vault.JobKindExpire, j.Kind)
		assert.True(t, file.ExpiresAt.Add(time.Minute).Equal(j.RunAt))
	})
	run(t, newStore, "GetNotFound", func(t *testing.T, f *fixture) {
		file, _ := f.PendingFile("a.txt")
		other := f.Workspace("other")
		_, err := f.s.GetFile(f.ctx, other.ID, file.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.GetFile(f.ctx, f.ws.ID, "f0000000-0000-4000-8000-000000000000")
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.LookupFile(f.ctx, "f0000000-0000-4000-8000-000000000000")
		requireCode(t, canvas.ENOTFOUND, err)
		got, err := f.s.LookupFile(f.ctx, file.ID)
		require.NoError(t, err)
		assert.Equal(t, f.ws.ID, got.WorkspaceID)
	})
	run(t, newStore, "MarkUploaded", func(t *testing.T, f *fixture) {
		file, _ := f.PendingFile("a.txt")
		upload := uploadOf("blob-1")
		got, err := f.s.MarkUploaded(f.ctx, file.ID, upload)
		require.NoError(t, err)
		assert.Equal(t, vault.StatusUploaded, got.Status)
		assert.Equal(t, upload.MimeType, got.MimeType)
		assert.Equal(t, upload.Size, got.Size)
		assert.Equal(t, upload.SHA256, got.SHA256)
		assert.Equal(t, upload.BlobKey, got.BlobKey)
		require.NotNil(t, got.UploadedAt)

		again, err := f.s.GetFile(f.ctx, f.ws.ID, file.ID)
		require.NoError(t, err)
		assert.Equal(t, got, again)
	})
	run(t, newStore, "MarkUploadedTwice", func(t *testing.T, f *fixture) {
		file, _ := f.PendingFile("a.txt")
		_, err := f.s.MarkUploaded(f.ctx, file.ID, uploadOf("blob-1"))
		require.NoError(t, err)
		_, err = f.s.MarkUploaded(f.ctx, file.ID, uploadOf("blob-2"))
		requireCode(t, canvas.ECONFLICT, err)
		got, err := f.s.GetFile(f.ctx, f.ws.ID, file.ID)
		require.NoError(t, err)
		assert.Equal(t, "blob-1", got.BlobKey, "the first upload is kept")

		_, err = f.s.MarkUploaded(f.ctx, "f0000000-0000-4000-8000-000000000000", uploadOf("blob-3"))
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "MarkUploadedConcurrent", func(t *testing.T, f *fixture) {
		file, _ := f.PendingFile("a.txt")
		const n = 8
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				_, errs[i] = f.s.MarkUploaded(f.ctx, file.ID, uploadOf(file.ID+"-"+string(rune('a'+i))))
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				assert.Equal(t, canvas.ECONFLICT, canvas.ErrorCode(err))
			}
		}
		assert.Equal(t, 1, won, "exactly one upload claims the file")
	})
	run(t, newStore, "Delete", func(t *testing.T, f *fixture) {
		file, _ := f.PendingFile("a.txt")
		_, err := f.s.MarkUploaded(f.ctx, file.ID, uploadOf("blob-1"))
		require.NoError(t, err)
		other := f.Workspace("other")
		_, err = f.s.DeleteFile(f.ctx, other.ID, file.ID)
		requireCode(t, canvas.ENOTFOUND, err)

		gone, err := f.s.DeleteFile(f.ctx, f.ws.ID, file.ID)
		require.NoError(t, err)
		assert.Equal(t, "blob-1", gone.BlobKey, "the caller learns which bytes to remove")
		_, err = f.s.GetFile(f.ctx, f.ws.ID, file.ID)
		requireCode(t, canvas.ENOTFOUND, err)
		_, err = f.s.DeleteFile(f.ctx, f.ws.ID, file.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "DeletePending", func(t *testing.T, f *fixture) {
		pending, _ := f.PendingFile("pending.txt")
		uploaded, _ := f.PendingFile("uploaded.txt")
		_, err := f.s.MarkUploaded(f.ctx, uploaded.ID, uploadOf("blob-1"))
		require.NoError(t, err)

		gone, err := f.s.DeletePendingFile(f.ctx, pending.ID)
		require.NoError(t, err)
		assert.Equal(t, pending.ID, gone.ID)
		_, err = f.s.GetFile(f.ctx, f.ws.ID, pending.ID)
		requireCode(t, canvas.ENOTFOUND, err)

		_, err = f.s.DeletePendingFile(f.ctx, uploaded.ID)
		requireCode(t, canvas.ECONFLICT, err)
		_, err = f.s.GetFile(f.ctx, f.ws.ID, uploaded.ID)
		assert.NoError(t, err, "an uploaded file is left alone")
		_, err = f.s.DeletePendingFile(f.ctx, pending.ID)
		requireCode(t, canvas.ENOTFOUND, err)
	})
	run(t, newStore, "UploadSecret", func(t *testing.T, f *fixture) {
		first, err := f.s.UploadSecret(f.ctx)
		require.NoError(t, err)
		assert.Len(t, first, 32)
		assert.NotEqual(t, make([]byte, 32), first)
		second, err := f.s.UploadSecret(f.ctx)
		require.NoError(t, err)
		assert.Equal(t, first, second, "the secret is created once")
	})
}
