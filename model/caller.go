package model

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

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
	// Kinds builds the providers of workspace credentials, by provider
	// name; a credential of a kind missing here serves nothing.
	Kinds Kinds
	// Credentials are the workspaces' credentials; nil runs every model on
	// Providers alone.
	Credentials Credentials
	// Prices price each answer (Result.Cost); nil prices with the bundled
	// catalogue alone.
	Prices Prices
	// Retry bounds the retries of a vendor's retryable failures.
	Retry Retry
}

// Retry bounds how a call that failed with a retryable vendor error (see
// VendorError.Retryable) is tried again: up to Attempts attempts per
// target, waiting the vendor's Retry-After or an exponential backoff from
// BaseDelay with jitter, never more than MaxDelay at once. A vendor asking
// for a longer wait than MaxDelay moves on to the next fallback at once.
// Zero fields take DefaultRetry's.
type Retry struct {
	Attempts  int
	BaseDelay time.Duration
	MaxDelay  time.Duration
}

// DefaultRetry is the retry of a Caller whose Options leave it zero.
var DefaultRetry = Retry{Attempts: 3, BaseDelay: 500 * time.Millisecond, MaxDelay: 20 * time.Second}

// Caller makes one model call the way every part of the service makes it:
// completions, tasks, test cases and the llm steps of workflows all call
// through one Caller, so that they resolve files, pick providers, report
// failures and check structured output alike.
type Caller struct {
	providers   *Registry
	files       *FileResolver
	maxPrompt   int
	observe     CallObserver
	kinds       Kinds
	credentials Credentials
	prices      Prices
	retry       Retry
	pool        *pool
}

// NewCaller returns a Caller. A nil Providers serves the echo model alone.
func NewCaller(opts Options) *Caller {
	if opts.Providers == nil {
		opts.Providers = NewRegistry(NewEcho(EchoOptions{}))
	}
	if opts.MaxPromptBytes <= 0 {
		opts.MaxPromptBytes = DefaultMaxRenderBytes
	}
	if opts.Prices == nil {
		opts.Prices = CataloguePrices{Bundled()}
	}
	r := &opts.Retry
	if r.Attempts <= 0 {
		r.Attempts = DefaultRetry.Attempts
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = DefaultRetry.BaseDelay
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = DefaultRetry.MaxDelay
	}
	return &Caller{providers: opts.Providers, files: NewFileResolver(opts.Files), maxPrompt: opts.MaxPromptBytes,
		observe: opts.Observe, kinds: opts.Kinds, credentials: opts.Credentials, prices: opts.Prices,
		retry: opts.Retry, pool: newPool(opts.Kinds)}
}

// MaxPromptBytes returns the bound of a prompt (Options.MaxPromptBytes).
func (c *Caller) MaxPromptBytes() int { return c.maxPrompt }

// Providers returns the registry the Caller resolves models in.
func (c *Caller) Providers() *Registry { return c.providers }

// Check checks the request before it is accepted, without calling the
// model: a request without a credential must name a model the Registry
// serves (VALIDATION otherwise), and every file address of the messages
// must resolve in workspaceID (FileResolver.Check). It reads no file
// content.
func (c *Caller) Check(ctx context.Context, workspaceID string, req Request) error {
	if req.CredentialID == "" {
		if _, err := c.providers.Resolve(req.Model); err != nil {
			return err
		}
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
	return c.Send(ctx, workspaceID, req, emit)
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
//
// The request runs on its target (Request.CredentialID and Provider, or
// the Registry's provider for its model), then on each of its Fallbacks in
// turn while the failure is a retryable vendor error. On each target a
// retryable failure is tried again within c's Retry, unless a stream has
// already emitted part of its answer. A credential's calls are bounded in
// number across the process and in time (its Settings). The Result says
// which target answered and what the answer cost.
func (c *Caller) Send(ctx context.Context, workspaceID string, req Request, emit func(Chunk) error) (*Result, error) {
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
	targets := append([]Target{{Model: req.Model, Provider: req.Provider, CredentialID: req.CredentialID}}, req.Fallbacks...)
	var (
		res     *Result
		err     error
		emitted bool
	)
	if emit != nil {
		inner := emit
		emit = func(ch Chunk) error {
			emitted = true
			return inner(ch)
		}
	}
	for i, t := range targets {
		if i > 0 && emitted {
			break
		}
		res, err = c.sendTarget(ctx, workspaceID, req, t, emit, &emitted)
		if err == nil || ctx.Err() != nil {
			break
		}
		if ve := vendorError(err); ve == nil || !ve.Retryable() {
			break
		}
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

// sendTarget makes the call of req on one target, with its retries.
func (c *Caller) sendTarget(ctx context.Context, workspaceID string, req Request, t Target, emit func(Chunk) error, emitted *bool) (*Result, error) {
	req.Model, req.Provider, req.CredentialID, req.Fallbacks = t.Model, t.Provider, t.CredentialID, nil
	for attempt := 1; ; attempt++ {
		res, err := c.attempt(ctx, workspaceID, req, emit)
		if err == nil {
			if t.CredentialID != "" && c.credentials != nil {
				c.credentials.Used(context.WithoutCancel(ctx), workspaceID, t.CredentialID)
			}
			return res, nil
		}
		ve := vendorError(err)
		if ve == nil || !ve.Retryable() || attempt >= c.retry.Attempts || *emitted {
			return nil, err
		}
		wait := c.retry.backoff(attempt, ve.RetryAfter)
		if wait < 0 {
			return nil, err
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, err
		case <-timer.C:
		}
	}
}

// attempt makes one call of req on its target.
func (c *Caller) attempt(ctx context.Context, workspaceID string, req Request, emit func(Chunk) error) (*Result, error) {
	prov, release, timeout, err := c.provider(ctx, workspaceID, req)
	if err != nil {
		return nil, err
	}
	defer release()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
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
	if err == nil {
		res.Target = Target{Model: req.Model, Provider: req.Provider, CredentialID: req.CredentialID}
		if res.Model == "" {
			res.Model = req.Model
		}
		res.Cost = c.cost(ctx, workspaceID, res)
	}
	if done != nil {
		done(res, err)
	}
	return res, err
}

// provider returns the provider of req's target, the function that
// releases the credential's slot, and the call's timeout (zero: the
// provider's own).
func (c *Caller) provider(ctx context.Context, workspaceID string, req Request) (Provider, func(), time.Duration, error) {
	if req.CredentialID == "" {
		p, err := c.providers.Resolve(req.Model)
		return p, func() {}, 0, err
	}
	if c.credentials == nil {
		return nil, nil, 0, canvas.Errorf(canvas.EPROVIDER, "No credential store is configured to run on credential %s.", req.CredentialID)
	}
	return c.pool.get(ctx, c.credentials, workspaceID, req.CredentialID)
}

// cost prices res, or returns nil when no price is known (or the prices
// cannot be read: a run is not failed for its price).
func (c *Caller) cost(ctx context.Context, workspaceID string, res *Result) *Cost {
	for _, name := range []string{res.Model, res.Target.Model} {
		if name == "" {
			continue
		}
		if p, ok, err := c.prices.Price(ctx, workspaceID, name); err == nil && ok {
			return p.Cost(res.Usage)
		}
	}
	return nil
}

// backoff returns how long to wait before attempt+1: the vendor's
// Retry-After when it gave one, else BaseDelay doubled per attempt with
// up to half of it added at random; -1 when the vendor asks for longer than
// MaxDelay.
func (r Retry) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > r.MaxDelay {
		return -1
	}
	if retryAfter > 0 {
		return retryAfter
	}
	d := r.BaseDelay << (attempt - 1)
	if d > r.MaxDelay || d <= 0 {
		d = r.MaxDelay
	}
	d += time.Duration(rand.Int64N(int64(d)/2 + 1))
	return min(d, r.MaxDelay)
}

// OutputError is a structured output mismatch: the model answered, but
// not as the schema asks. Its cause is the PROVIDER_ERROR that says why.
type OutputError struct{ Err error }

// Error implements the error interface.
func (e *OutputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *OutputError) Unwrap() error { return e.Err }
