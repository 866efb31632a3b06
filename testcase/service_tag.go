package testcase

import (
	"context"
	"fmt"
	"slices"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// CreateTagParams are the fields of a new tag. The JSON names are those of
// the request body of POST /test-case-tags.
type CreateTagParams struct {
	// Name is required: not blank, at most MaxTagNameLength characters.
	Name string `json:"name"`
	// Color is free text (for example "#ff8800"), at most
	// MaxTagColorLength characters; it may be empty.
	Color string `json:"color"`
	// PromptID is the canvas the tag belongs to; required.
	PromptID string `json:"promptId"`
}

// BulkTagParams name the test cases and tags of a bulk tagging call. Each
// list holds 1 to MaxBulkIDs ids; repeated ids count once.
type BulkTagParams struct {
	TestCaseIDs []string `json:"testCaseIds"`
	TagIDs      []string `json:"tagIds"`
}

// CreateTag creates a tag of a canvas. It requires the editor role.
func (s *Service) CreateTag(ctx context.Context, params CreateTagParams) (*Tag, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	v.tagName("/json/name", params.Name)
	v.tagColor("/json/color", params.Color)
	v.uuid("/json/promptId", params.PromptID)
	if err := v.err(); err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, params.PromptID); err != nil {
		return nil, err
	}
	t := &Tag{Name: params.Name, Color: params.Color, PromptID: params.PromptID, WorkspaceID: p.WorkspaceID}
	if err := s.store.CreateTag(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// GetTag returns a live tag. It requires the viewer role.
func (s *Service) GetTag(ctx context.Context, id string) (*Tag, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.tag(ctx, p, id)
}

// ListTags returns the live tags of a canvas ordered by name. It requires
// the viewer role.
func (s *Service) ListTags(ctx context.Context, promptID string) ([]*Tag, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, promptID); err != nil {
		return nil, err
	}
	return s.store.ListTags(ctx, p.WorkspaceID, promptID, nil)
}

// UpdateTag applies a partial update to a tag and returns it. It requires
// the editor role, on the tag's canvas and, when PromptID moves it, on the
// new canvas too. A tag still assigned to test cases cannot move to another
// canvas (CONFLICT): remove its assignments first.
func (s *Service) UpdateTag(ctx context.Context, id string, upd TagUpdate) (*Tag, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if upd.Name != nil {
		v.tagName("/json/name", *upd.Name)
	}
	if upd.Color != nil {
		v.tagColor("/json/color", *upd.Color)
	}
	if upd.PromptID != nil {
		v.uuid("/json/promptId", *upd.PromptID)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	t, err := s.tag(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if upd.PromptID != nil && *upd.PromptID != t.PromptID {
		if _, err := s.canvas(ctx, p, *upd.PromptID); err != nil {
			return nil, err
		}
	}
	return s.store.UpdateTag(ctx, p.WorkspaceID, id, upd)
}

// DeleteTag soft-deletes a tag and removes it from every test case. It
// requires the editor role.
func (s *Service) DeleteTag(ctx context.Context, id string) error {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return err
	}
	if _, err := s.tag(ctx, p, id); err != nil {
		return err
	}
	return s.store.DeleteTag(ctx, p.WorkspaceID, id)
}

// BulkAddTags assigns every tag to every test case, skipping the pairs
// already assigned, so that repeating the call changes nothing. It requires
// the editor role. Every id is checked before anything is written: an
// unknown or deleted test case or tag is NOT_FOUND, and a tag of another
// canvas than a test case it is paired with is VALIDATION, naming the tag.
func (s *Service) BulkAddTags(ctx context.Context, params BulkTagParams) (BulkAddResult, error) {
	p, tcIDs, tagIDs, err := s.checkBulk(ctx, params, true)
	if err != nil {
		return BulkAddResult{}, err
	}
	return s.store.AddTags(ctx, p.WorkspaceID, tcIDs, tagIDs)
}

// BulkRemoveTags removes every tag from every test case, counting the pairs
// that were not assigned as skipped. It requires the editor role, and checks
// the ids as BulkAddTags does, except that a pair of different canvases,
// which cannot be assigned, is merely skipped.
func (s *Service) BulkRemoveTags(ctx context.Context, params BulkTagParams) (BulkRemoveResult, error) {
	p, tcIDs, tagIDs, err := s.checkBulk(ctx, params, false)
	if err != nil {
		return BulkRemoveResult{}, err
	}
	return s.store.RemoveTags(ctx, p.WorkspaceID, tcIDs, tagIDs)
}

// checkBulk authorizes a bulk call and checks its ids: well formed, every
// one a live row whose canvas the principal may write, and every pair of
// one canvas when pairs is set. It returns the distinct ids.
func (s *Service) checkBulk(ctx context.Context, params BulkTagParams, pairs bool) (*canvas.Principal, []string, []string, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, nil, nil, err
	}
	var v validator
	tcIDs := v.ids("/json/testCaseIds", params.TestCaseIDs)
	tagIDs := v.ids("/json/tagIds", params.TagIDs)
	if err := v.err(); err != nil {
		return nil, nil, nil, err
	}
	cases, err := s.store.ListTestCases(ctx, Filter{WorkspaceID: p.WorkspaceID, IDs: tcIDs})
	if err != nil {
		return nil, nil, nil, err
	}
	tags, err := s.store.ListTags(ctx, p.WorkspaceID, "", tagIDs)
	if err != nil {
		return nil, nil, nil, err
	}
	caseCanvas := make(map[string]string, len(cases))
	for _, tc := range cases {
		caseCanvas[tc.ID] = tc.PromptID
	}
	tagCanvas := make(map[string]string, len(tags))
	for _, t := range tags {
		tagCanvas[t.ID] = t.PromptID
	}
	for _, id := range tcIDs {
		if _, ok := caseCanvas[id]; !ok {
			return nil, nil, nil, canvas.Errorf(canvas.ENOTFOUND, "Test case %s not found.", id)
		}
	}
	for _, id := range tagIDs {
		if _, ok := tagCanvas[id]; !ok {
			return nil, nil, nil, canvas.Errorf(canvas.ENOTFOUND, "Test case tag %s not found.", id)
		}
	}
	check := s.checker(p)
	for _, id := range tcIDs {
		if err := check.check(ctx, caseCanvas[id]); err != nil {
			return nil, nil, nil, err
		}
	}
	for _, id := range tagIDs {
		if err := check.check(ctx, tagCanvas[id]); err != nil {
			return nil, nil, nil, err
		}
	}
	canvases := map[string]bool{}
	for _, id := range tcIDs {
		canvases[caseCanvas[id]] = true
	}
	for i, id := range params.TagIDs {
		if c, ok := tagCanvas[id]; pairs && ok && (len(canvases) > 1 || !canvases[c]) && slices.Index(params.TagIDs, id) == i {
			other := firstOtherCanvas(tcIDs, caseCanvas, c)
			v.add(fmt.Sprintf("/json/tagIds/%d", i),
				"tag %s belongs to another canvas than test case %s: a tag joins test cases of its own canvas only", id, other)
		}
	}
	if err := v.err(); err != nil {
		return nil, nil, nil, err
	}
	return p, tcIDs, tagIDs, nil
}

// firstOtherCanvas returns the first test case whose canvas is not c.
func firstOtherCanvas(ids []string, canvasOf map[string]string, c string) string {
	for _, id := range ids {
		if canvasOf[id] != c {
			return id
		}
	}
	return ""
}
