package canvas

import "encoding/json"

// WorkflowCompiler checks a workflow specification when a version is saved
// and returns the graph to store with it; its error is returned as it is
// (VALIDATION with pointers). SpecMessages returns the texts of a compiled
// spec that may include canvases (the messages of its llm nodes), each at
// its pointer under /json/workflowSpec, for the save's include checks.
type WorkflowCompiler interface {
	CompileSpec(spec json.RawMessage) (graph json.RawMessage, err error)
	SpecMessages(spec json.RawMessage) []MessageContent
}

// compileWorkflow compiles the spec of a new version, when there is one,
// and returns its graph (nil otherwise); a spec without a compiler is
// VALIDATION.
// It returns the problems of the other fields (v) as CreateVersion always
// has, joined by the compiler's VALIDATION details so that one error lists
// every problem of the request; alone, the compiler's error is returned as
// it is.
func (s *Service) compileWorkflow(v *validator, spec json.RawMessage) (json.RawMessage, error) {
	if spec == nil {
		return nil, v.err()
	}
	if s.workflows == nil {
		v.details = append(v.details, Detail{Path: "/json/workflowSpec", Message: "this service does not run workflows"})
		return nil, v.err()
	}
	graph, err := s.workflows.CompileSpec(spec)
	if err != nil {
		if len(v.details) == 0 || ErrorCode(err) != EINVALID {
			return nil, err
		}
		v.details = append(v.details, ErrorDetails(err)...)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return graph, nil
}
