package model

import (
	"context"
	"io"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// VaultFiles returns a FileOpener over the vault: it opens a file as a
// viewer of workspaceID would (vault.Service.Open), so that a file of
// another workspace, an unknown file or a file never uploaded is NOT_FOUND.
// It acts as the caller of ctx when ctx carries one of workspaceID, so
// that a project-restricted caller opens only the files it may reach, and
// otherwise as a "system" viewer: runs executed by the queue carry no
// caller, and were checked when they were accepted.
func VaultFiles(v *vault.Service) FileOpener {
	return FileOpenerFunc(func(ctx context.Context, workspaceID, fileID string) (FileInfo, io.ReadCloser, error) {
		if p := canvas.PrincipalFrom(ctx); p == nil || p.WorkspaceID != workspaceID {
			ctx = canvas.NewContext(ctx, &canvas.Principal{WorkspaceID: workspaceID, Role: canvas.RoleViewer})
		}
		f, rc, err := v.Open(ctx, fileID)
		if err != nil {
			return FileInfo{}, nil, err
		}
		return FileInfo{Name: f.FileName, MIMEType: f.MimeType, Size: f.Size}, rc, nil
	})
}
