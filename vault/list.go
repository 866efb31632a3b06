package vault

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Page bounds of ListFiles.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// ListParams select the files to list.
type ListParams struct {
	// Status, when set, keeps the files in that status (StatusPending or
	// StatusUploaded) only.
	Status string
	// Limit is the page size, 1..MaxListLimit; zero means
	// DefaultListLimit. Offset is the number of files skipped.
	Limit  int
	Offset int
}

// ListFiles returns one page of the metadata of the principal's workspace's
// files, pending and uploaded, newest first, and how many the filter
// selects in all. It requires the viewer role. A file belongs to no
// project, so a project-restricted principal lists only the files it
// uploaded, as GetFile reaches only those. A Status that is not a file
// status, a Limit outside 0..MaxListLimit or a negative Offset is
// VALIDATION, each problem at its query parameter.
func (s *Service) ListFiles(ctx context.Context, params ListParams) ([]*File, int, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, 0, err
	}
	if params.Limit == 0 {
		params.Limit = DefaultListLimit
	}
	var details []canvas.Detail
	switch params.Status {
	case "", StatusPending, StatusUploaded:
	default:
		details = append(details, canvas.Detail{Path: "/query/status", Message: "must be pending or uploaded"})
	}
	if params.Limit < 1 || params.Limit > MaxListLimit {
		details = append(details, canvas.Detail{Path: "/query/limit", Message: "must be between 1 and 100"})
	}
	if params.Offset < 0 {
		details = append(details, canvas.Detail{Path: "/query/offset", Message: "must not be negative"})
	}
	if details != nil {
		return nil, 0, canvas.Invalid("The file query is not valid.", details...)
	}
	f := FileFilter{WorkspaceID: p.WorkspaceID, Status: params.Status, Limit: params.Limit, Offset: params.Offset}
	if p.Restricted() {
		f.CreatedBy = p.Actor()
	}
	files, total, err := s.store.ListFiles(ctx, f)
	if err != nil {
		return nil, 0, err
	}
	if files == nil {
		files = []*File{}
	}
	return files, total, nil
}
