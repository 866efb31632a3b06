package completion

import "context"

// Call sends one resolved request to its model and returns the answer,
// recording no run: the model call of a workflow's llm step, whose run is
// the workflow run. An empty model means EchoModel.
//
// It takes the path every completion takes: the file addresses of the
// messages are resolved in workspaceID (a vault file of another workspace
// is NOT_FOUND), the model must be served by a provider (VALIDATION
// otherwise), and the output must match an enabled structured output
// schema. A back-end failure or a mismatching output is a PROVIDER_ERROR;
// when ctx ends first the error has code ErrCodeCancelled and wraps ctx's
// error. Call reads no Principal: its caller has authorized the run.
func (s *Service) Call(ctx context.Context, workspaceID string, req RunRequest) (*Result, error) {
	if req.Model == "" {
		req.Model = EchoModel
	}
	preq, err := s.request(ctx, &Run{WorkspaceID: workspaceID, Request: req})
	if err != nil {
		return nil, err
	}
	return s.call(ctx, preq, nil)
}
