package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/env"
)

// registerEnvironmentRoutes mounts the environment operations: custom
// environments, publishing, the publication history and the served version.
func (s *Server) registerEnvironmentRoutes() {
	s.route("POST /environment", s.handleCreateEnvironment)
	s.route("GET /environment", s.handleListEnvironments)
	s.route("DELETE /environment/{id}", deleteForced(s.envService, (*env.Service).DeleteEnvironment))
	s.route("PATCH /environment/{id}", s.handleSetPolicy)
	s.route("POST /environment/publish", s.handlePublish)
	s.route("GET /environment/versions", s.handleEnvironmentHistory)
	s.route("GET /environment/version", s.handleEnvironmentVersion)
	s.route("GET /environment/watch", s.handleEnvironmentWatch)
	s.route("GET /environment/split-stats", s.handleSplitStats)
}

// handleCreateEnvironment creates a custom environment: 201 with it.
func (s *Server) handleCreateEnvironment(w http.ResponseWriter, r *http.Request) error {
	var req wire.CreateEnvironmentRequest
	if err := s.decodeJSON(r, "CreateEnvironmentRequest", &req); err != nil {
		return err
	}
	e, err := s.environments.CreateEnvironment(r.Context(), env.CreateEnvironmentParams{
		CanvasID: req.ResourceID,
		Name:     req.Name,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, e)
	return nil
}

// handleSetPolicy sets an environment's protection: 200 with the
// environment.
func (s *Server) handleSetPolicy(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var req wire.EnvironmentPolicyRequest
	if err := s.decodeJSON(r, "EnvironmentPolicyRequest", &req); err != nil {
		return err
	}
	params := env.SetPolicyParams{ID: id, Protected: req.Protected, RequiredApprovals: req.RequiredApprovals}
	if x := req.RequiredExperiment; x != nil {
		params.RequiredExperiment = &env.RequiredExperiment{TagIDs: x.TagIDs, MinPassRate: x.MinPassRate}
	}
	e, err := s.environments.SetPolicy(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, e)
	return nil
}

// handleListEnvironments lists a canvas' environments with the version each
// one serves.
func (s *Server) handleListEnvironments(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	q.Enum("resourceType", true, env.ResourcePrompt)
	canvasID := q.UUID("resourceId", true)
	if err := q.Err(); err != nil {
		return err
	}
	envs, err := s.environments.ListEnvironments(r.Context(), canvasID)
	if err != nil {
		return err
	}
	if envs == nil {
		envs = []*env.Environment{}
	}
	writeJSON(w, http.StatusOK, envs)
	return nil
}

// handlePublish publishes a version, or a split of versions, to an
// environment: 201 with the new publication, or 200 with the active one
// when the same version and split already were.
func (s *Server) handlePublish(w http.ResponseWriter, r *http.Request) error {
	var req wire.PublishRequest
	if err := s.decodeJSON(r, "PublishRequest", &req); err != nil {
		return err
	}
	pub, created, err := s.environments.Publish(r.Context(), env.PublishVersionParams{
		CanvasID:  req.ResourceID,
		EnvName:   req.EnvName,
		VersionID: req.VersionID,
		Split:     envSplit(req.Split),
	})
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, pub)
	return nil
}

// envSplit is a split of a request body as package env takes it, nil for
// none.
func envSplit(split []wire.SplitEntry) []env.SplitEntry {
	var out []env.SplitEntry
	for _, e := range split {
		out = append(out, env.SplitEntry{VersionID: e.VersionID, Weight: e.Weight})
	}
	return out
}

// handleEnvironmentHistory serves one page of an environment's publication
// history in the pagination envelope, newest first.
func (s *Server) handleEnvironmentHistory(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	canvasID, envName := environmentQuery(q)
	limit := q.Int("limit", env.DefaultLimit)
	offset := q.Int("offset", 0)
	objectLinks := q.Bool("objectLinks", false)
	if err := q.Err(); err != nil {
		return err
	}
	page, err := s.environments.History(r.Context(), env.HistoryParams{
		CanvasID: canvasID,
		EnvName:  envName,
		Limit:    limit,
		Offset:   offset,
	})
	if err != nil {
		return err
	}
	var lastRef *int64
	if n := len(page.Items); n > 0 {
		lastRef = &page.Items[n-1].Seq
	}
	writeJSON(w, http.StatusOK, newPage(page.Items, page.Total, lastRef, pageRequest{
		Filters: []pageParam{
			{"resourceType", env.ResourcePrompt},
			{"resourceId", canvasID},
			{"envName", page.Environment.Name},
		},
		Limit:       page.Limit,
		Offset:      page.Offset,
		ObjectLinks: objectLinks,
	}))
	return nil
}

// environmentQuery reads the parameters that select an environment:
// resourceType (only prompt), resourceId (a UUID) and envName, all required.
// The name rules are checked by the env service, which answers 400 rather
// than 422 for a name that breaks them.
func environmentQuery(q *query) (canvasID, envName string) {
	q.Enum("resourceType", true, env.ResourcePrompt)
	canvasID = q.UUID("resourceId", true)
	envName = q.String("envName", true)
	return canvasID, envName
}

// handleSplitStats reports, per variant of a publication of an environment
// (the active one, or publicationId), the runs it served: runs, errors,
// latency percentiles, cost and end-user feedback.
func (s *Server) handleSplitStats(w http.ResponseWriter, r *http.Request) error {
	q := newQuery(r)
	canvasID, envName := environmentQuery(q)
	publicationID := q.UUID("publicationId", false)
	if err := q.Err(); err != nil {
		return err
	}
	stats, err := s.environments.SplitStats(r.Context(), env.SplitStatsParams{CanvasID: canvasID, EnvName: envName,
		PublicationID: publicationID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, stats)
	return nil
}

// assignmentKeyQuery reads the optional assignmentKey parameter of a read
// that an environment serves.
func assignmentKeyQuery(q *query) string {
	key := q.String("assignmentKey", false)
	if err := env.CheckAssignmentKey(key, "/query/assignmentKey"); err != nil {
		for _, d := range canvas.ErrorDetails(err) {
			q.fail("assignmentKey", d.Message)
		}
	}
	return key
}
