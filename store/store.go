// Package store defines Store, the union of the store interfaces that the
// domain packages declare. store/sqlite is the embedded implementation;
// store/storetest is the conformance suite every implementation passes.
package store

import (
	"context"

	"github.com/promptcanvas/promptcanvas/audit"
	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/completion"
	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/experiment"
	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
	"github.com/promptcanvas/promptcanvas/review"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
	"github.com/promptcanvas/promptcanvas/workflow"
)

// Store is everything the service persists.
type Store interface {
	canvas.Store
	env.Store
	idempotency.Store
	queue.Store
	queue.Backlog
	completion.Store
	vault.Store
	testcase.Store
	testcase.GenerationStore
	webhook.ApplicationStore
	webhook.NotifierStore
	webhook.LogStore
	workflow.Store
	retention.Store
	credential.Store
	review.Store
	experiment.Store
	audit.Store

	// Ping reports whether the store answers.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}
