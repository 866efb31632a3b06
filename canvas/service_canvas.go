package canvas

import (
	"context"
)

// CreateCanvasParams are the fields of a new canvas. The JSON names are those
// of the request body of POST /prompt.
type CreateCanvasParams struct {
	// Title is required, at most 256 characters.
	Title string `json:"title"`
	// ProjectID places the canvas in a project of the workspace. Nil makes
	// the canvas a personal draft of the caller's user, which needs a user
	// identity: an API key cannot own drafts.
	ProjectID *string `json:"projectId"`
	// CustomTags default to none.
	CustomTags []string `json:"customTags"`
	// LayoutVersion is v1 (the default) or v2.
	LayoutVersion string `json:"layoutVersion"`
	// InferencesPercentage is a decimal string from 0 to 100; default "0".
	InferencesPercentage string `json:"inferencesPercentage"`
	// AllowedCredentials restricts the credentials the canvas may use; nil
	// means unrestricted.
	AllowedCredentials []string `json:"allowedCredentials"`
}

// CreateCanvas creates a canvas in the principal's workspace. It requires
// the editor role. A project must exist in the workspace (NOT_FOUND) and be
// accessible (FORBIDDEN).
func (s *Service) CreateCanvas(ctx context.Context, params CreateCanvasParams) (*Canvas, error) {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return nil, err
	}
	if params.LayoutVersion == "" {
		params.LayoutVersion = LayoutV1
	}
	if params.InferencesPercentage == "" {
		params.InferencesPercentage = "0"
	}
	if params.CustomTags == nil {
		params.CustomTags = []string{}
	}
	var v validator
	v.requiredTitle("/json/title", params.Title)
	v.layoutVersion("/json/layoutVersion", params.LayoutVersion)
	v.inferencesPercentage("/json/inferencesPercentage", params.InferencesPercentage)
	v.customTags("/json/customTags", params.CustomTags)
	v.credentials("/json/allowedCredentials", params.AllowedCredentials)
	if params.ProjectID != nil {
		v.uuid("/json/projectId", *params.ProjectID)
	} else if !p.HasUser() {
		v.add("/json/projectId", "is required: a token without a user identity (an API key) cannot own personal drafts")
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	if params.ProjectID != nil {
		if err := s.project(ctx, p, *params.ProjectID); err != nil {
			return nil, err
		}
	}
	if err := s.checkCredentials(ctx, p.WorkspaceID, "/json/allowedCredentials", params.AllowedCredentials); err != nil {
		return nil, err
	}

	c := &Canvas{
		Title:                params.Title,
		ProjectID:            params.ProjectID,
		InferencesPercentage: params.InferencesPercentage,
		LayoutVersion:        params.LayoutVersion,
		WorkspaceID:          p.WorkspaceID,
		CustomTags:           params.CustomTags,
		AllowedCredentials:   params.AllowedCredentials,
		CreatedBy:            p.Actor(),
		UpdatedBy:            p.Actor(),
	}
	if err := s.store.CreateCanvas(ctx, c); err != nil {
		return nil, err
	}
	if p.HasUser() {
		favorited := false
		c.Favorited = &favorited
	}
	return c, nil
}

// GetCanvas returns a live canvas the principal may reach. It requires the
// viewer role.
func (s *Service) GetCanvas(ctx context.Context, id string) (*Canvas, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.canvas(ctx, p, id)
}

// ListCanvasesParams select the canvases ListCanvases returns. Zero values
// select everything the principal may see.
type ListCanvasesParams struct {
	// ProjectID restricts the list to one project; a project the principal
	// cannot access is FORBIDDEN.
	ProjectID string
	// WorkspaceID restricts the list to a workspace. Results are always
	// scoped to the principal's workspace, so naming another one yields an
	// empty list.
	WorkspaceID string
	// IncludePromotedVersion fills each canvas' promotedVersion and
	// latestVersion.
	IncludePromotedVersion bool
	// DraftsOnly returns only the caller's personal drafts, and an empty
	// list for a principal without a user identity.
	DraftsOnly bool
}

// ListCanvases returns the canvases the principal can access in its
// workspace: canvases of accessible projects plus the caller's own personal
// drafts. It requires the viewer role.
func (s *Service) ListCanvases(ctx context.Context, params ListCanvasesParams) ([]*Canvas, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	if params.ProjectID != "" && !p.CanAccessProject(params.ProjectID) {
		return nil, Errorf(EFORBIDDEN, "This token has no access to the project.")
	}
	switch {
	case params.WorkspaceID != "" && params.WorkspaceID != p.WorkspaceID,
		params.DraftsOnly && !p.HasUser(),
		params.DraftsOnly && params.ProjectID != "":
		return []*Canvas{}, nil
	}
	f := CanvasFilter{
		WorkspaceID:     p.WorkspaceID,
		DraftsOnly:      params.DraftsOnly,
		IncludeVersions: params.IncludePromotedVersion,
		Projects:        p.Projects,
		OwnerID:         p.UserID,
		UserID:          p.UserID,
	}
	if params.ProjectID != "" {
		f.ProjectID = &params.ProjectID
	}
	return s.store.ListCanvases(ctx, f)
}

// UpdateCanvas applies a partial update to a canvas and returns it. It
// requires the editor role, except an update that only sets Favorited (a
// preference of the caller's user), which a viewer may make.
//
// Moving the canvas to another project needs access to that project; making
// it a personal draft (ProjectID set to nil) is allowed only to the user who
// created it, since a draft belongs to its creator. Favorited needs a user
// identity.
func (s *Service) UpdateCanvas(ctx context.Context, id string, upd CanvasUpdate) (*Canvas, error) {
	want := RoleEditor
	if onlyFavorited(upd) {
		want = RoleViewer
	}
	p, err := Authorize(ctx, want)
	if err != nil {
		return nil, err
	}
	var v validator
	if upd.Title != nil {
		v.requiredTitle("/json/title", *upd.Title)
	}
	if upd.LayoutVersion != nil {
		v.layoutVersion("/json/layoutVersion", *upd.LayoutVersion)
	}
	if upd.InferencesPercentage != nil {
		v.inferencesPercentage("/json/inferencesPercentage", *upd.InferencesPercentage)
	}
	if upd.CustomTags != nil {
		if *upd.CustomTags == nil {
			none := []string{}
			upd.CustomTags = &none
		}
		v.customTags("/json/customTags", *upd.CustomTags)
	}
	if upd.AllowedCredentials != nil {
		v.credentials("/json/allowedCredentials", *upd.AllowedCredentials)
	}
	if upd.Favorited != nil && !p.HasUser() {
		v.add("/json/favorited", "needs a token with a user identity")
	}
	if upd.ProjectID != nil && *upd.ProjectID != nil {
		v.uuid("/json/projectId", **upd.ProjectID)
	}
	if err := v.err(); err != nil {
		return nil, err
	}

	c, err := s.canvas(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if upd.ProjectID != nil {
		if to := *upd.ProjectID; to != nil {
			if err := s.project(ctx, p, *to); err != nil {
				return nil, err
			}
		} else if to == nil && c.ProjectID != nil && (!p.HasUser() || c.CreatedBy != p.UserID) {
			return nil, Invalid("Request failed validation.", Detail{Path: "/json/projectId",
				Message: "only the user who created the canvas can make it a personal draft"})
		}
	}
	if upd.AllowedCredentials != nil {
		if err := s.checkCredentials(ctx, p.WorkspaceID, "/json/allowedCredentials", *upd.AllowedCredentials); err != nil {
			return nil, err
		}
	}
	return s.store.UpdateCanvas(ctx, UpdateCanvasParams{WorkspaceID: p.WorkspaceID, ID: id, Update: upd,
		By: p.Actor(), UserID: p.UserID})
}

// onlyFavorited reports whether an update sets Favorited and nothing else.
func onlyFavorited(upd CanvasUpdate) bool {
	return upd.Favorited != nil && upd == CanvasUpdate{Favorited: upd.Favorited}
}

// DeleteCanvas soft-deletes a canvas: it vanishes from lists and reads as
// NOT_FOUND, with its versions and their messages. It requires the editor
// role. A canvas that live versions of other canvases include is CONFLICT
// listing them (RefuseDependents), unless opts force it.
func (s *Service) DeleteCanvas(ctx context.Context, id string, opts ...DeleteOptions) error {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return err
	}
	if _, err := s.canvas(ctx, p, id); err != nil {
		return err
	}
	deps, err := s.dependents(ctx, p.WorkspaceID, id)
	if err != nil {
		return err
	}
	if err := RefuseDependents(deps, "canvas", opts, func(Dependent) bool { return true }); err != nil {
		return err
	}
	return s.store.DeleteCanvas(ctx, DeleteCanvasParams{WorkspaceID: p.WorkspaceID, ID: id, By: p.Actor()})
}
