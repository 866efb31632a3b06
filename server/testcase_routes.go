package server

import (
	"net/http"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/testcase"
)

// registerTestCaseRoutes mounts the test case, tag and bulk tagging
// endpoints.
func (s *Server) registerTestCaseRoutes() {
	s.route("POST /test-case",
		withBody(s, s.testCasesService, "CreateTestCaseRequest", http.StatusCreated, (*testcase.Service).CreateTestCase))
	s.route("GET /test-case", s.handleListTestCases)
	s.route("GET /test-case/{id}", withID(s.testCasesService, "id", (*testcase.Service).GetTestCase))
	s.route("PATCH /test-case/{id}", s.handleUpdateTestCase)
	s.route("DELETE /test-case/{id}", deleteID(s.testCasesService, (*testcase.Service).DeleteTestCase))
	s.route("POST /test-case/bulk-add-tags",
		withBody(s, s.testCasesService, "BulkTagRequest", http.StatusOK, (*testcase.Service).BulkAddTags))
	s.route("POST /test-case/bulk-remove-tags",
		withBody(s, s.testCasesService, "BulkTagRequest", http.StatusOK, (*testcase.Service).BulkRemoveTags))

	s.route("POST /test-case-tags",
		withBody(s, s.testCasesService, "CreateTestCaseTagRequest", http.StatusCreated, (*testcase.Service).CreateTag))
	s.route("GET /test-case-tags", s.handleListTags)
	s.route("GET /test-case-tags/{id}", withID(s.testCasesService, "id", (*testcase.Service).GetTag))
	s.route("PATCH /test-case-tags/{id}", s.handleUpdateTag)
	s.route("DELETE /test-case-tags/{id}", deleteID(s.testCasesService, (*testcase.Service).DeleteTag))
}

// testCasesService returns the test case service, or NOT_FOUND when the
// server was built without one.
func (s *Server) testCasesService() (*testcase.Service, error) {
	if s.testCases == nil {
		return nil, canvas.Errorf(canvas.ENOTFOUND, "Test cases are not configured on this server.")
	}
	return s.testCases, nil
}

// handleListTestCases lists a canvas' test cases. promptVersionIds (repeated)
// keeps only the included generations of those versions; it never removes a
// test case and has no effect without includeGenerations=true.
func (s *Server) handleListTestCases(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.testCasesService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	params := testcase.ListParams{
		PromptID:           q.UUID("promptId", true),
		PromptVersionIDs:   q.UUIDs("promptVersionIds"),
		IncludeGenerations: q.Bool("includeGenerations", false),
	}
	if err := q.Err(); err != nil {
		return err
	}
	list, err := svc.ListTestCases(r.Context(), params)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(list))
	return nil
}

// updateTestCaseRequest is the body of PATCH /test-case/{id}: a field that
// is absent is left alone, and null clears a nullable field.
type updateTestCaseRequest struct {
	Title                *string                                 `json:"title"`
	Messages             nullable[[]testcase.Message]            `json:"messages"`
	Variables            nullable[map[string]any]                `json:"variables"`
	VariablesRichContent nullable[map[string]any]                `json:"variablesRichContent"`
	Files                nullable[[]testcase.File]               `json:"files"`
	ExpectedOutput       nullable[string]                        `json:"expectedOutput"`
	Evaluator            nullable[testcase.Evaluator]            `json:"evaluator"`
	Answers              nullable[map[string]testcase.AnswerSet] `json:"answers"`
	PromptApplicationID  nullable[string]                        `json:"promptApplicationId"`
	Metadata             nullable[testcase.Metadata]             `json:"metadata"`
}

// update turns the body into the service's partial update.
func (b *updateTestCaseRequest) update() testcase.Update {
	upd := testcase.Update{Title: b.Title}
	if b.Messages.Set {
		v := nilIfNullSlice(b.Messages.Value, b.Messages.Null)
		upd.Messages = &v
	}
	if b.Variables.Set {
		v := nilIfNull(b.Variables.Value, b.Variables.Null, map[string]any{})
		upd.Variables = &v
	}
	if b.VariablesRichContent.Set {
		v := nilIfNull(b.VariablesRichContent.Value, b.VariablesRichContent.Null, map[string]any{})
		upd.VariablesRichContent = &v
	}
	if b.Files.Set {
		v := nilIfNullSlice(b.Files.Value, b.Files.Null)
		upd.Files = &v
	}
	if b.ExpectedOutput.Set {
		v := b.ExpectedOutput.Ptr()
		upd.ExpectedOutput = &v
	}
	if b.Evaluator.Set {
		v := b.Evaluator.Ptr()
		upd.Evaluator = &v
	}
	if b.Answers.Set {
		v := nilIfNull(b.Answers.Value, b.Answers.Null, map[string]testcase.AnswerSet{})
		upd.Answers = &v
	}
	if b.PromptApplicationID.Set {
		v := b.PromptApplicationID.Ptr()
		upd.PromptApplicationID = &v
	}
	if b.Metadata.Set {
		v := b.Metadata.Ptr()
		upd.Metadata = &v
	}
	return upd
}

// nilIfNull returns nil for a null map, empty for a map given as {}, and m
// otherwise.
func nilIfNull[K comparable, V any](m map[K]V, null bool, empty map[K]V) map[K]V {
	switch {
	case null:
		return nil
	case m == nil:
		return empty
	}
	return m
}

// nilIfNullSlice is nilIfNull for a list: nil for an explicit null, an
// empty list for an absent value.
func nilIfNullSlice[T any](s []T, null bool) []T {
	switch {
	case null:
		return nil
	case s == nil:
		return []T{}
	}
	return s
}

func (s *Server) handleUpdateTestCase(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.testCasesService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var body updateTestCaseRequest
	if err := s.decodeJSON(r, "UpdateTestCaseRequest", &body); err != nil {
		return err
	}
	tc, err := svc.UpdateTestCase(r.Context(), id, body.update())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, tc)
	return nil
}

func (s *Server) handleListTags(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.testCasesService()
	if err != nil {
		return err
	}
	q := newQuery(r)
	promptID := q.UUID("promptId", true)
	if err := q.Err(); err != nil {
		return err
	}
	list, err := svc.ListTags(r.Context(), promptID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(list))
	return nil
}

func (s *Server) handleUpdateTag(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.testCasesService()
	if err != nil {
		return err
	}
	id, err := pathUUID(r, "id")
	if err != nil {
		return err
	}
	var upd testcase.TagUpdate
	if err := s.decodeJSON(r, "UpdateTestCaseTagRequest", &upd); err != nil {
		return err
	}
	t, err := svc.UpdateTag(r.Context(), id, upd)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}
