package model

import "context"

// CallObserver watches the calls a Caller makes to its providers, for
// metrics and traces. It is called before each call with the request, and
// returns the context to make the call under and a function the Caller
// calls once with the call's outcome. It must be safe for concurrent use.
type CallObserver func(ctx context.Context, req Request) (context.Context, func(*Result, error))
