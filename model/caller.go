package model

import (
	"context"
	"errors"
	"fmt"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Options wire a Caller. Providers is required.
type Options struct {
	// Providers maps model names to back ends.
	Providers *Registry
	// Files resolves file variables: vault:// addresses and public URLs.
	Files FileOptions
	// MaxPromptBytes bounds a prompt: what rendering writes (RenderMax)
	// and the messages once their text files are inlined; zero means
	// DefaultMaxRenderBytes.
	MaxPromptBytes int
	// Observe, when set, watches each call to a provider.
	Observe CallObserver
}

// Caller makes one model call the way every part of the service makes it:
// completions, tasks, test cases and the llm steps of workflows all call
// through one Caller, so that they resolve files, pick providers, report
// failures and check structured output alike.
type Caller struct {
	providers *Registry
	files     *FileResolver
	maxPrompt int
	observe   CallObserver
}

// NewCaller returns a Caller. A nil Providers serves the echo model alone.
func NewCaller(opts Options) *Caller {
	if opts.Providers == nil {
		opts.Providers = NewRegistry(NewEcho(EchoOptions{}))
	}
	if opts.MaxPromptBytes <= 0 {
		opts.MaxPromptBytes = DefaultMaxRenderBytes
	}
	return &Caller{providers: opts.Providers, files: NewFileResolver(opts.Files), maxPrompt: opts.MaxPromptBytes,
		observe: opts.Observe}
}

// MaxPromptBytes returns the bound of a prompt (Options.MaxPromptBytes).
func (c *Caller) MaxPromptBytes() int { return c.maxPrompt }

// Providers returns the registry the Caller resolves models in.
func (c *Caller) Providers() *Registry { return c.providers }

// Check checks the request before it is accepted, without calling the
// model: the model must be served by a provider (VALIDATION otherwise) and
// every file address of the messages must resolve in workspaceID
// (FileResolver.Check). It reads no file content.
func (c *Caller) Check(ctx context.Context, workspaceID string, req Request) error {
	if _, err := c.providers.Resolve(req.Model); err != nil {
		return err
	}
	if HasFileRefs(req.Messages) {
		return c.files.Check(ctx, workspaceID, req.Messages)
	}
	return nil
}

// Call sends req to its model and returns the answer; an empty model means
// EchoModel. With emit set the answer is streamed to it chunk by chunk.
//
// The file addresses of the messages are resolved in workspaceID (a vault
// file of another workspace is NOT_FOUND); the model must be served by a
// provider (VALIDATION otherwise); a back-end failure is a PROVIDER_ERROR;
// when ctx ends first the error has code canvas.ECANCELLED and wraps ctx's
// error. When structured output is enabled, an answer that does not match
// the schema is returned with an *OutputError: the model answered, so
// calling again is not expected to help. Call reads no Principal: its
// caller has authorized the call.
func (c *Caller) Call(ctx context.Context, workspaceID string, req Request, emit func(Chunk) error) (*Result, error) {
	req, err := c.Resolve(ctx, workspaceID, req)
	if err != nil {
		return nil, err
	}
	return c.Send(ctx, req, emit)
}

// Resolve returns req with the files of its messages resolved in
// workspaceID (FileResolver.Resolve), ready for Send: for a caller that
// must know the files are usable before it commits to the call. Messages
// whose inlined text files pass MaxPromptBytes together are
// PAYLOAD_TOO_LARGE.
func (c *Caller) Resolve(ctx context.Context, workspaceID string, req Request) (Request, error) {
	if !HasFileRefs(req.Messages) {
		return req, nil
	}
	msgs, err := c.files.Resolve(ctx, workspaceID, req.Messages)
	if err != nil {
		return req, err
	}
	total := 0
	for _, m := range msgs {
		total += len(m.Content)
	}
	if total > c.maxPrompt {
		return req, &canvas.Error{Code: canvas.EPAYLOADTOOLARGE, Message: fmt.Sprintf(
			"The prompt with its files inlined would be larger than %d bytes.", c.maxPrompt),
			Details: []canvas.Detail{{Path: "/json/variables", Message: "the files inlined pass the prompt's bound"}}}
	}
	req.Messages = msgs
	return req, nil
}

// Send is Call for a request whose files Resolve has resolved.
func (c *Caller) Send(ctx context.Context, req Request, emit func(Chunk) error) (*Result, error) {
	if req.Model == "" {
		req.Model = EchoModel
	}
	var schema *Schema
	if req.Structured() {
		var err error
		if schema, err = CompileSchema(req.StructuredOutput.Schema); err != nil {
			return nil, err
		}
	}
	prov, err := c.providers.Resolve(req.Model)
	if err != nil {
		return nil, err
	}
	var done func(*Result, error)
	if c.observe != nil {
		ctx, done = c.observe(ctx, req)
	}
	var res *Result
	if emit != nil {
		res, err = prov.Stream(ctx, req, emit)
	} else {
		res, err = prov.Complete(ctx, req)
	}
	if done != nil {
		done(res, err)
	}
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil, &canvas.Error{Code: canvas.ECANCELLED, Message: "The caller went away before the model finished.", Err: err}
		}
		if canvas.ErrorCode(err) == canvas.EINTERNAL {
			return nil, &canvas.Error{Code: canvas.EPROVIDER, Message: "The model back end failed.", Err: err}
		}
		return nil, err
	}
	if schema != nil {
		if err := schema.Validate(res.Text); err != nil {
			return res, &OutputError{err}
		}
	}
	return res, nil
}

// OutputError is a structured output mismatch: the model answered, but
// not as the schema asks. Its cause is the PROVIDER_ERROR that says why.
type OutputError struct{ Err error }

// Error implements the error interface.
func (e *OutputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *OutputError) Unwrap() error { return e.Err }
