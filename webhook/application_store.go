package webhook

import (
	"context"
	"time"
)

// ApplicationStore is the persistence of applications, their subscriptions
// and signing secrets. Implementations set ids (when empty) and timestamps
// from one clock reading per transaction, and scope every read and write
// to a workspace: an application of another workspace is NOT_FOUND.
// Applications it returns have HasSecret filled from their live secrets.
type ApplicationStore interface {
	SubscriptionStore

	// CreateApplication inserts a and its first signing secret.
	CreateApplication(ctx context.Context, a *Application, secret string) error
	// GetApplication returns an application of the workspace.
	GetApplication(ctx context.Context, workspaceID, id string) (*Application, error)
	// ListApplications returns the applications of the workspace, oldest
	// first (then by id); canvasID, when not empty, keeps those of that
	// canvas.
	ListApplications(ctx context.Context, workspaceID, canvasID string) ([]*Application, error)
	// UpdateApplication applies upd and returns the application.
	UpdateApplication(ctx context.Context, workspaceID, id string, upd ApplicationUpdate) (*Application, error)
	// DeleteApplication removes the application and its secrets.
	DeleteApplication(ctx context.Context, workspaceID, id string) error
	// RotateSecret adds p.Secret as the application's newest signing
	// secret; the secrets that were live stay live until now+p.Overlap
	// (those that already expire sooner keep their expiry).
	RotateSecret(ctx context.Context, p RotateSecretParams) error
}

// RotateSecretParams name an application of a workspace, its new signing
// secret, and how long the secrets live until now stay live.
type RotateSecretParams struct {
	WorkspaceID   string
	ApplicationID string
	Secret        string
	Overlap       time.Duration
}

// ApplicationUpdate is a partial update: nil fields keep their value.
// Enabling the subscription (Enabled set to true) clears DisabledAt,
// DisabledReason and the failure count.
type ApplicationUpdate struct {
	Name            *string
	PromptID        **string
	EnvironmentName *string
	Enabled         *bool
	URL             *string
	Headers         *[]Header
	EventTypes      *[]string
}
