package sqlstore

import (
	"context"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// MaxIncluders bounds the versions ListIncluders returns.
const MaxIncluders = 200

// ListIncluders returns, filled as GetVersion fills them, the live
// versions of the workspace's live canvases other than canvasID whose live
// messages mention canvasID after an include's "{{>", at most
// MaxIncluders of them, by canvas and history. The caller parses the
// messages to tell the includes from other mentions.
func (s *Store) ListIncluders(ctx context.Context, workspaceID, canvasID string) ([]*canvas.Version, error) {
	var list []*canvas.Version
	err := s.read(ctx, func(ctx context.Context, tx *Tx) error {
		var err error
		list, err = s.queryVersionsLimit(ctx, tx, workspaceID, MaxIncluders, `v.canvas_id <> ? AND v.id IN (
			SELECT m.version_id FROM messages m WHERE m.deleted_at IS NULL AND m.content LIKE ? AND m.content LIKE ?)`,
			canvasID, "%{{>%", "%"+canvasID+"%")
		return err
	})
	return list, err
}
