package canvas

import "context"

// CreateMessageParams are the fields of a new message. The JSON names are
// those of the request body of POST /prompt-version-message.
type CreateMessageParams struct {
	// ID may be supplied by the client (a UUID); the store assigns one
	// otherwise. An id already in use is CONFLICT.
	ID string `json:"id"`
	// PromptVersionID is the version the message belongs to.
	PromptVersionID string `json:"promptVersionId"`
	// Role is one of user, assistant, system and function; required.
	Role string `json:"role"`
	// Content may use {{variable}} placeholders.
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent"`
	// Index is the position inside the version, at least 0; the system
	// message at index 0 is the prompt.
	Index int `json:"index"`
}

// CreateMessage adds a message to a version and returns it. It requires the
// editor role.
func (s *Service) CreateMessage(ctx context.Context, params CreateMessageParams) (*Message, error) {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if params.ID != "" {
		v.uuid("/json/id", params.ID)
	}
	v.uuid("/json/promptVersionId", params.PromptVersionID)
	v.message("/json", params.Role, params.Index)
	if err := v.err(); err != nil {
		return nil, err
	}
	ver, err := s.version(ctx, p, params.PromptVersionID)
	if err != nil {
		return nil, err
	}
	if err := s.checkIncludes(ctx, ver.PromptID, []MessageContent{{Path: "/json/content", Content: params.Content}}); err != nil {
		return nil, err
	}
	m := &Message{
		ID:              params.ID,
		PromptVersionID: params.PromptVersionID,
		Role:            params.Role,
		Content:         params.Content,
		MarkdownContent: params.MarkdownContent,
		Index:           params.Index,
		CreatedBy:       p.Actor(),
		UpdatedBy:       p.Actor(),
	}
	if err := s.store.CreateMessage(ctx, p.WorkspaceID, m); err != nil {
		return nil, err
	}
	return m, nil
}

// ListMessagesParams select the messages ListMessages returns.
type ListMessagesParams struct {
	// PromptVersionID is the version whose messages are listed; required.
	PromptVersionID string
}

// ListMessages returns the live messages of a version ordered by index. It
// requires the viewer role.
func (s *Service) ListMessages(ctx context.Context, params ListMessagesParams) ([]*Message, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.version(ctx, p, params.PromptVersionID); err != nil {
		return nil, err
	}
	return s.store.ListMessages(ctx, p.WorkspaceID, params.PromptVersionID)
}

// UpdateMessage applies a partial update to a message and returns it. It
// requires the editor role.
func (s *Service) UpdateMessage(ctx context.Context, id string, upd MessageUpdate) (*Message, error) {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if upd.Role != nil {
		v.role("/json/role", *upd.Role)
	}
	if upd.Index != nil {
		v.index("/json/index", *upd.Index)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	cur, err := s.message(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if upd.Content != nil {
		ver, err := s.store.GetVersion(ctx, p.WorkspaceID, cur.PromptVersionID)
		if err != nil {
			return nil, err
		}
		if err := s.checkIncludes(ctx, ver.PromptID, []MessageContent{{Path: "/json/content", Content: *upd.Content}}); err != nil {
			return nil, err
		}
	}
	return s.store.UpdateMessage(ctx, UpdateMessageParams{WorkspaceID: p.WorkspaceID, ID: id, Update: upd,
		By: p.Actor()})
}

// DeleteMessage soft-deletes a message. It requires the editor role.
func (s *Service) DeleteMessage(ctx context.Context, id string) error {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return err
	}
	if _, err := s.message(ctx, p, id); err != nil {
		return err
	}
	return s.store.DeleteMessage(ctx, p.WorkspaceID, id)
}

// message returns a live message whose canvas the principal may reach.
func (s *Service) message(ctx context.Context, p *Principal, id string) (*Message, error) {
	m, err := s.store.GetMessage(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.version(ctx, p, m.PromptVersionID); err != nil {
		return nil, err
	}
	return m, nil
}
