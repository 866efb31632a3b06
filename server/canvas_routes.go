package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// registerProjectRoutes mounts the project endpoints of DESIGN.md.
func (s *Server) registerProjectRoutes() {
	s.route("POST /projects",
		withBody(s, s.canvasService, "CreateProjectRequest", http.StatusCreated, (*canvas.Service).CreateProject))
	s.route("GET /projects", s.handleListProjects)
}

// registerCanvasRoutes mounts the canvas, version and message endpoints.
func (s *Server) registerCanvasRoutes() {
	s.route("POST /prompt",
		withBody(s, s.canvasService, "CreateCanvasRequest", http.StatusCreated, (*canvas.Service).CreateCanvas))
	s.route("GET /prompt", s.handleListCanvases)
	s.route("GET /prompt/{id}", withIDTagged(s.canvasService, "id", (*canvas.Service).GetCanvas))
	s.route("PATCH /prompt/{id}", s.handleUpdateCanvas)
	s.route("DELETE /prompt/{id}", deleteForced(s.canvasService, (*canvas.Service).DeleteCanvas))
	s.route("GET /prompt/{id}/dependents", withID(s.canvasService, "id", (*canvas.Service).Dependents))

	s.route("POST /prompt-version",
		withBody(s, s.canvasService, "CreateVersionRequest", http.StatusCreated, (*canvas.Service).CreateVersion))
	s.route("GET /prompt-version", s.handleListVersions)
	s.route("GET /prompt-version/{id}", withIDTagged(s.canvasService, "id", (*canvas.Service).GetVersion))
	s.route("PATCH /prompt-version/{id}", s.handleUpdateVersion)
	s.route("GET /prompt-version/{id}/diff", s.handleDiffVersions)
	s.route("DELETE /prompt-version/{id}", deleteForced(s.canvasService, (*canvas.Service).DeleteVersion))

	s.route("POST /prompt-version-message",
		withBody(s, s.canvasService, "CreateMessageRequest", http.StatusCreated, (*canvas.Service).CreateMessage))
	s.route("GET /prompt-version-message", s.handleListMessages)
	s.route("PATCH /prompt-version-message/{id}", s.handleUpdateMessage)
	s.route("DELETE /prompt-version-message/{id}", deleteID(s.canvasService, (*canvas.Service).DeleteMessage))
}

func (s *Server) handleListProjects(w http.ResponseWriter, r *http.Request) error {
	projects, err := s.canvases.ListProjects(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, projects)
	return nil
}

func (s *Server) handleListCanvases(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	params := canvas.ListCanvasesParams{
		ProjectID:              q.UUID("projectId", false),
		WorkspaceID:            q.UUID("workspaceId", false),
		IncludePromotedVersion: q.Bool("includePromotedVersion", false),
		DraftsOnly:             q.Bool("draftsOnly", false),
	}
	if err := q.Err(); err != nil {
		return err
	}
	list, err := s.canvases.ListCanvases(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(list))
	return nil
}

func (s *Server) handleUpdateCanvas(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var body struct {
		Title                *string            `json:"title"`
		ProjectID            nullable[string]   `json:"projectId"`
		CustomTags           *[]string          `json:"customTags"`
		LayoutVersion        *string            `json:"layoutVersion"`
		InferencesPercentage *string            `json:"inferencesPercentage"`
		AllowedCredentials   nullable[[]string] `json:"allowedCredentials"`
		Favorited            *bool              `json:"favorited"`
	}
	if err := s.decodeJSON(r, "UpdateCanvasRequest", &body); err != nil {
		return err
	}
	upd := canvas.CanvasUpdate{
		Title:                body.Title,
		CustomTags:           body.CustomTags,
		LayoutVersion:        body.LayoutVersion,
		InferencesPercentage: body.InferencesPercentage,
		Favorited:            body.Favorited,
	}
	if body.ProjectID.Set {
		to := body.ProjectID.Ptr()
		upd.ProjectID = &to
	}
	if body.AllowedCredentials.Set {
		if body.AllowedCredentials.Null {
			upd.AllowedCredentialsNull = true
		} else {
			upd.AllowedCredentials = &body.AllowedCredentials.Value
		}
	}
	c, err := s.canvases.UpdateCanvas(r.Context(), id, upd)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) handleListVersions(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	promptID := q.UUID("promptId", true)
	if err := q.Err(); err != nil {
		return err
	}
	list, err := s.canvases.ListVersions(r.Context(), canvas.ListVersionsParams{PromptID: promptID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(list))
	return nil
}

// handleDiffVersions serves what changes from the version of the query's
// against to the version of the path.
func (s *Server) handleDiffVersions(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	q := newQuery(r)
	against := q.UUID("against", true)
	if err := q.Err(); err != nil {
		return err
	}
	d, err := s.canvases.DiffVersions(r.Context(), canvas.DiffVersionsParams{VersionID: id, AgainstID: against})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

func (s *Server) handleUpdateVersion(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var body struct {
		Title           *string            `json:"title"`
		Content         *string            `json:"content"`
		MarkdownContent *string            `json:"markdownContent"`
		Configuration   json.RawMessage    `json:"configuration"`
		Variables       *[]canvas.Variable `json:"variables"`
		Promoted        *bool              `json:"promoted"`
		Draft           *bool              `json:"draft"`
		Messages        *messageInputs     `json:"messages"`
	}
	if err := s.decodeJSON(r, "UpdateVersionRequest", &body); err != nil {
		return err
	}
	upd := canvas.VersionUpdate{
		Title:              body.Title,
		Content:            body.Content,
		MarkdownContent:    body.MarkdownContent,
		ConfigurationPatch: body.Configuration,
		Variables:          body.Variables,
		Promoted:           body.Promoted,
		Draft:              body.Draft,
	}
	if body.Messages != nil {
		upd.Messages = &body.Messages.List
	}
	v, err := s.canvases.UpdateVersion(r.Context(), id, upd)
	if err != nil {
		if body.Messages != nil && body.Messages.Object {
			err = rebaseDetails(err, "/json/messages/0", "/json/messages")
		}
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) handleListMessages(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	versionID := q.UUID("promptVersionId", true)
	if err := q.Err(); err != nil {
		return err
	}
	list, err := s.canvases.ListMessages(r.Context(), canvas.ListMessagesParams{PromptVersionID: versionID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(list))
	return nil
}

func (s *Server) handleUpdateMessage(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var body struct {
		Role            *string `json:"role"`
		Content         *string `json:"content"`
		MarkdownContent *string `json:"markdownContent"`
		Index           *int    `json:"index"`
	}
	if err := s.decodeJSON(r, "UpdateMessageRequest", &body); err != nil {
		return err
	}
	m, err := s.canvases.UpdateMessage(r.Context(), id, canvas.MessageUpdate{
		Role:            body.Role,
		Content:         body.Content,
		MarkdownContent: body.MarkdownContent,
		Index:           body.Index,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

// nullable is a body field that tells "absent" (Set false), "null" (Set and
// Null) and a value apart, for partial updates where null means "clear".
type nullable[T any] struct {
	Set   bool
	Null  bool
	Value T
}

// UnmarshalJSON records that the field was present; encoding/json calls it
// for null as well.
func (n *nullable[T]) UnmarshalJSON(b []byte) error {
	n.Set = true
	if string(b) == "null" {
		n.Null = true
		return nil
	}
	return json.Unmarshal(b, &n.Value)
}

// Ptr returns nil for null, else a pointer to the value.
func (n *nullable[T]) Ptr() *T {
	if n.Null {
		return nil
	}
	return &n.Value
}

// messageInputs is the messages field of a version update: one message
// object or an array of them.
type messageInputs struct {
	List []canvas.MessageInput
	// Object is true when the body gave a single object.
	Object bool
}

// UnmarshalJSON accepts an object or an array.
func (m *messageInputs) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
		var one canvas.MessageInput
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		m.List, m.Object = []canvas.MessageInput{one}, true
		return nil
	}
	m.List = []canvas.MessageInput{}
	return json.Unmarshal(b, &m.List)
}

// rebaseDetails rewrites the detail paths of a VALIDATION error that start
// with from so that they start with to instead; other errors pass through.
func rebaseDetails(err error, from, to string) error {
	details := canvas.ErrorDetails(err)
	if canvas.ErrorCode(err) != canvas.EINVALID || len(details) == 0 {
		return err
	}
	out := make([]canvas.Detail, len(details))
	for i, d := range details {
		if rest, ok := strings.CutPrefix(d.Path, from); ok && (rest == "" || rest[0] == '/') {
			d.Path = to + rest
		}
		out[i] = d
	}
	return canvas.Invalid(canvas.ErrorMessage(err), out...)
}

// nonNil returns list, or an empty list for nil, so that an empty result is
// written as [] rather than null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
