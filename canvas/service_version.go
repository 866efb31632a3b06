package canvas

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// CreateVersionParams are the fields of a new version. The JSON names are
// those of the request body of POST /prompt-version.
type CreateVersionParams struct {
	// PromptID is the canvas the version belongs to.
	PromptID string `json:"promptId"`
	// Title defaults to "Version N", N being the version's position in the
	// canvas history (VersionIndex), or to "<origin title> (copy)" for a
	// duplicate. At most 256 characters.
	Title string `json:"title"`
	// Configuration is the model configuration; nil means empty, or the
	// origin's for a duplicate.
	Configuration *Configuration `json:"configuration"`
	// Variables are the variable definitions; nil means none, or the
	// origin's for a duplicate (an empty non-nil slice means none).
	Variables []Variable `json:"variables"`
	// Draft marks the version as a draft; the default is false.
	Draft bool `json:"draft"`
	// OriginVersionID makes the version a duplicate of another live version
	// of the same canvas.
	OriginVersionID string `json:"originVersionId"`
	// Message is an optional single message stored at index 0; its role
	// defaults to system, which makes it the version's prompt. Nil means no
	// message, or copies of the origin's messages for a duplicate.
	Message *MessageInput `json:"message"`
	// IsWorkflow marks a workflow version; it requires WorkflowSpec.
	IsWorkflow bool `json:"isWorkflow"`
	// WorkflowSpec is the author's workflow specification, stored as
	// given. With WithWorkflows, it is compiled first: an invalid spec is
	// VALIDATION, a valid one is stored with its graph and makes the
	// version a workflow.
	WorkflowSpec json.RawMessage `json:"workflowSpec"`
}

// CreateVersion adds a version at the end of a canvas' history and returns
// it as GetVersion does. It requires the editor role.
//
// A duplicate (OriginVersionID set) copies, field by field, what the caller
// does not give: the origin's configuration when Configuration is nil, its
// variables when Variables is nil, its messages when Message is nil, and its
// workflow (isWorkflow, workflowSpec, graph) when the caller gives neither
// IsWorkflow nor WorkflowSpec. The origin must be a live version of the same
// canvas: NOT_FOUND when it does not exist, VALIDATION when it belongs to
// another canvas.
func (s *Service) CreateVersion(ctx context.Context, params CreateVersionParams) (*Version, error) {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	v.uuid("/json/promptId", params.PromptID)
	if params.Title != "" {
		v.requiredTitle("/json/title", params.Title)
	}
	var vars []Variable
	if params.Variables != nil {
		vars = v.variables("/json/variables", params.Variables)
	}
	var msg *Message
	if in := params.Message; in != nil {
		role := in.Role
		if role == "" {
			role = RoleSystem
		}
		if in.ID != "" {
			v.uuid("/json/message/id", in.ID)
		}
		v.role("/json/message/role", role)
		msg = &Message{ID: in.ID, Role: role, Content: in.Content, MarkdownContent: in.MarkdownContent,
			CreatedBy: p.Actor(), UpdatedBy: p.Actor()}
	}
	if params.OriginVersionID != "" {
		v.uuid("/json/originVersionId", params.OriginVersionID)
	}
	spec := params.WorkflowSpec
	if isNull(spec) {
		spec = nil
	}
	if params.IsWorkflow && spec == nil {
		v.add("/json/workflowSpec", "is required when isWorkflow is true")
	}
	graph, err := s.compileWorkflow(&v, spec)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, params.PromptID); err != nil {
		return nil, err
	}

	ver := &Version{
		PromptID:     params.PromptID,
		Title:        params.Title,
		Variables:    vars,
		Draft:        params.Draft,
		WorkspaceID:  p.WorkspaceID,
		IsWorkflow:   params.IsWorkflow || graph != nil,
		WorkflowSpec: spec,
		Graph:        graph,
		CreatedBy:    p.Actor(),
		UpdatedBy:    p.Actor(),
		Messages:     []Message{},
	}
	if params.Configuration != nil {
		ver.Configuration = *params.Configuration
		if err := ver.Configuration.Check(); err != nil {
			return nil, err
		}
	}
	if msg != nil {
		ver.Messages = []Message{*msg}
		if err := s.checkIncludes(ctx, params.PromptID, []MessageContent{{Path: "/json/message/content",
			Content: msg.Content}}); err != nil {
			return nil, err
		}
	}
	if graph != nil {
		if err := s.checkIncludes(ctx, params.PromptID, s.workflows.SpecMessages(spec)); err != nil {
			return nil, err
		}
	}
	if params.OriginVersionID != "" {
		if err := s.duplicate(ctx, p, ver, params); err != nil {
			return nil, err
		}
	}
	if ver.Variables == nil {
		ver.Variables = []Variable{}
	}
	if err := s.store.CreateVersion(ctx, ver); err != nil {
		return nil, err
	}
	return s.store.GetVersion(ctx, p.WorkspaceID, ver.ID)
}

// duplicate fills ver with what the caller left out, from its origin.
func (s *Service) duplicate(ctx context.Context, p *Principal, ver *Version, params CreateVersionParams) error {
	origin, err := s.store.GetVersion(ctx, p.WorkspaceID, params.OriginVersionID)
	if err != nil {
		return err
	}
	if origin.PromptID != params.PromptID {
		return Invalid("Request failed validation.", Detail{Path: "/json/originVersionId",
			Message: "must be a version of the same prompt"})
	}
	ver.OriginVersionID = &origin.ID
	if ver.Title == "" {
		ver.Title = truncateRunes(origin.Title+" (copy)", MaxTitleLength)
	}
	if params.Configuration == nil {
		ver.Configuration = origin.Configuration
	}
	if params.Variables == nil {
		ver.Variables = origin.Variables
	}
	if params.Message == nil {
		ver.Messages = make([]Message, 0, len(origin.Messages))
		for _, m := range origin.Messages {
			ver.Messages = append(ver.Messages, Message{Role: m.Role, Content: m.Content,
				MarkdownContent: m.MarkdownContent, Index: m.Index, CreatedBy: p.Actor(), UpdatedBy: p.Actor()})
		}
	}
	if !params.IsWorkflow && ver.WorkflowSpec == nil {
		ver.IsWorkflow, ver.WorkflowSpec, ver.Graph = origin.IsWorkflow, origin.WorkflowSpec, origin.Graph
	}
	return nil
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n]))
}

// GetVersion returns a live version, with its live messages ordered by
// index and its prompt (the system message at index 0) as content. It
// requires the viewer role.
func (s *Service) GetVersion(ctx context.Context, id string) (*Version, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.version(ctx, p, id)
}

// ListVersionsParams select the versions ListVersions returns.
type ListVersionsParams struct {
	// PromptID is the canvas whose history is listed; required.
	PromptID string
}

// ListVersions returns the live versions of a canvas in history order. It
// requires the viewer role.
func (s *Service) ListVersions(ctx context.Context, params ListVersionsParams) ([]*Version, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, params.PromptID); err != nil {
		return nil, err
	}
	return s.store.ListVersions(ctx, p.WorkspaceID, params.PromptID)
}

// UpdateVersion applies a partial update to a version and returns it. It
// requires the editor role. ConfigurationPatch must be a JSON object and is
// merged key by key (RFC 7386); Messages replaces every message, each role
// defaulting to system; Promoted true publishes the version to production
// (through the Promoter, when the Service has one: see WithPromoter);
// Promoted false on the production version is CONFLICT while other
// canvases include the canvas's production version.
func (s *Service) UpdateVersion(ctx context.Context, id string, upd VersionUpdate) (*Version, error) {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return nil, err
	}
	var v validator
	if upd.Title != nil {
		v.requiredTitle("/json/title", *upd.Title)
	}
	if upd.ConfigurationPatch != nil {
		v.object("/json/configuration", upd.ConfigurationPatch)
	}
	if upd.Variables != nil {
		vars := v.variables("/json/variables", *upd.Variables)
		upd.Variables = &vars
	}
	if upd.Messages != nil {
		msgs := make([]MessageInput, len(*upd.Messages))
		for i, m := range *upd.Messages {
			if m.Role == "" {
				m.Role = RoleSystem
			}
			path := fmt.Sprintf("/json/messages/%d", i)
			if m.ID != "" {
				v.uuid(path+"/id", m.ID)
			}
			v.message(path, m.Role, m.Index)
			msgs[i] = m
		}
		upd.Messages = &msgs
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	cur, err := s.version(ctx, p, id)
	if err != nil {
		return nil, err
	}
	var contents []MessageContent
	if upd.Content != nil {
		contents = append(contents, MessageContent{Path: "/json/content", Content: *upd.Content})
	}
	if upd.Messages != nil {
		for i, m := range *upd.Messages {
			contents = append(contents, MessageContent{Path: fmt.Sprintf("/json/messages/%d/content", i), Content: m.Content})
		}
	}
	if err := s.checkIncludes(ctx, cur.PromptID, contents); err != nil {
		return nil, err
	}
	if upd.ConfigurationPatch != nil {
		if err := checkPatchedConfiguration(cur.Configuration, upd.ConfigurationPatch); err != nil {
			return nil, err
		}
	}
	if upd.Promoted != nil && !*upd.Promoted && cur.Promoted {
		// Withdrawing the production version breaks the includes of it.
		deps, err := s.dependents(ctx, p.WorkspaceID, cur.PromptID)
		if err != nil {
			return nil, err
		}
		if err := RefuseDependents(deps, "version", nil, func(d Dependent) bool {
			return d.Environment == ProductionEnvironment
		}); err != nil {
			return nil, err
		}
	}
	if upd.Promoted != nil && *upd.Promoted {
		if s.promoter == nil {
			return nil, Invalid("This service does not publish promotions.",
				Detail{Path: "/json/promoted", Message: "promotion is not available"})
		}
		// The publication commits first, on its own: a failure of the
		// rest is retried by sending the update again, and publishing the
		// active version again changes nothing.
		if err := s.promoter.PromoteVersion(ctx, cur.PromptID, id); err != nil {
			return nil, err
		}
		upd.Promoted = nil
	}
	return s.store.UpdateVersion(ctx, UpdateVersionParams{WorkspaceID: p.WorkspaceID, ID: id, Update: upd,
		By: p.Actor()})
}

// DeleteVersion soft-deletes a version. It requires the editor role; a
// version that an environment serves is CONFLICT, and so is one that live
// versions of other canvases include by its index ({{> ID@vN}}), unless
// opts force it.
func (s *Service) DeleteVersion(ctx context.Context, id string, opts ...DeleteOptions) error {
	p, err := Authorize(ctx, RoleEditor)
	if err != nil {
		return err
	}
	v, err := s.version(ctx, p, id)
	if err != nil {
		return err
	}
	deps, err := s.dependents(ctx, p.WorkspaceID, v.PromptID)
	if err != nil {
		return err
	}
	if err := RefuseDependents(deps, "version", opts, func(d Dependent) bool {
		return d.IncludedVersionIndex == v.VersionIndex
	}); err != nil {
		return err
	}
	return s.store.DeleteVersion(ctx, DeleteVersionParams{WorkspaceID: p.WorkspaceID, ID: id, By: p.Actor()})
}

// checkPatchedConfiguration applies patch to cur as the store will and
// checks the structured output of the result, so that a version never
// holds an invalid structured output schema.
func checkPatchedConfiguration(cur Configuration, patch []byte) error {
	doc, err := json.Marshal(cur)
	if err != nil {
		return err
	}
	merged, err := MergePatch(doc, patch)
	if err != nil {
		return Invalid("Request failed validation.", Detail{Path: "/json/configuration", Message: "must be an object"})
	}
	var next Configuration
	if err := json.Unmarshal(merged, &next); err != nil {
		return Invalid("Request failed validation.", Detail{Path: "/json/configuration", Message: "does not match the expected shape"})
	}
	return next.Check()
}
