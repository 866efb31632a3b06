package env

import (
	"context"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/queue"
)

// Production is the system environment every canvas has
// (canvas.ProductionEnvironment).
const Production = canvas.ProductionEnvironment

// ResourcePrompt is the only resource type environments belong to.
const ResourcePrompt = "prompt"

// Environment is a named deployment slot of a canvas.
type Environment struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	IsSystem     bool      `json:"isSystem"`
	ResourceType string    `json:"resourceType"`
	ResourceID   string    `json:"resourceId"`
	WorkspaceID  string    `json:"workspaceId"`
	CreatedBy    string    `json:"createdBy"`
	CreatedAt    time.Time `json:"createdAt"`
	// ActiveVersionID is the version the environment serves, or nil: for
	// a split, its first entry.
	ActiveVersionID *string `json:"activeVersionId"`
	// ActivePublicationID is the active publication, "" when none; Split
	// is its split, nil for a publication of one version.
	ActivePublicationID string       `json:"-"`
	Split               []SplitEntry `json:"-"`
	// Protected environments are published to only through publication
	// requests that RequiredApprovals other people approve (0 when not
	// protected), and, with RequiredExperiment, only a version that passed
	// it.
	Protected          bool                `json:"protected"`
	RequiredApprovals  int                 `json:"requiredApprovals"`
	RequiredExperiment *RequiredExperiment `json:"requiredExperiment"`
	// ProjectID is the project of the environment's canvas, as the store
	// reads it (for the audit log); it is not part of the API's answer.
	ProjectID *string `json:"-"`
}

// RequiredExperiment is the evaluation a version must have passed before
// a publication request of it to a protected environment may be approved:
// a completed experiment of the version over test cases of every tag of
// TagIDs whose pass rate for it is at least MinPassRate.
type RequiredExperiment struct {
	TagIDs      []string `json:"tagIds"`
	MinPassRate float64  `json:"minPassRate"`
}

// Approval bounds of a protected environment.
const (
	MinApprovals = 1
	MaxApprovals = 5
)

// PolicyParams set the protection of an environment.
type PolicyParams struct {
	WorkspaceID string
	ID          string
	// Protected false clears the policy: no approvals, no experiment.
	Protected          bool
	RequiredApprovals  int
	RequiredExperiment *RequiredExperiment
}

// Publication is one entry of an environment's history: a version published
// there, or a split of several (Split, whose first entry's version is
// VersionID and whose fields the publication shows). Seq numbers an environment's publications 1, 2, 3… in order, which
// lets a history page be read by range in O(limit).
type Publication struct {
	PublicationID       string     `json:"publicationId"`
	EnvironmentID       string     `json:"environmentId"`
	EnvironmentName     string     `json:"environmentName"`
	EnvironmentIsSystem bool       `json:"environmentIsSystem"`
	VersionID           string     `json:"versionId"`
	PromptID            string     `json:"promptId"`
	Title               string     `json:"title"`
	Promoted            *bool      `json:"promoted"`
	Draft               *bool      `json:"draft"`
	OriginVersionID     *string    `json:"originVersionId"`
	VersionIndex        int        `json:"versionIndex"`
	CreatedBy           string     `json:"createdBy"`
	UpdatedBy           string     `json:"updatedBy"`
	CreatedAt           *time.Time `json:"createdAt"`
	UpdatedAt           *time.Time `json:"updatedAt"`
	PublishedAt         time.Time  `json:"publishedAt"`
	PublishedBy         string     `json:"publishedBy"`
	UnpublishedAt       *time.Time `json:"unpublishedAt"`
	IsActive            bool       `json:"isActive"`
	// Split is the publication's split, nil for one version.
	Split []SplitEntry `json:"split,omitempty"`
	Seq   int64        `json:"-"`
}

// PublishParams says what to publish where.
type PublishParams struct {
	WorkspaceID string
	CanvasID    string
	// EnvName is an already validated name; production is created on
	// demand, any other environment must exist.
	EnvName string
	// VersionID is the version to publish; with a Split it is ignored and
	// the first entry's version is published.
	VersionID string
	// Split, when set, publishes a split: it must pass CheckSplit and name
	// live versions of the canvas (VALIDATION at the entry otherwise).
	Split []SplitEntry
	By    string
	// Event, when set, is the webhook event of the publication the publish
	// creates (none when the version was already active): its job is
	// written in the publish's transaction when a subscription of the
	// canvas takes events of Event.Type, and not otherwise. An error of
	// Event.Job fails the publish, which then writes nothing.
	Event *PublishEvent
}

// PublishEvent is the webhook event of a new publication. The store decides
// inside the publish's transaction, in SQL, whether anyone receives it: an
// application of the canvas whose events are enabled, with a URL, taking
// events of Type (all of them when its list is empty), as webhook.Takes
// says. So an event no one can receive costs no storage, and the
// transaction never waits for another connection.
type PublishEvent struct {
	// Type is the event type a subscription must take.
	Type string
	// Job returns the job that delivers the event of pub. It runs inside
	// the publish's transaction and does no I/O: it only builds the job.
	Job func(pub *Publication) (*queue.Job, error)
}

// Store is the persistence the env package consumes. Rows of another
// workspace are NOT_FOUND.
type Store interface {
	// CreateEnvironment inserts a custom environment of a live canvas; a
	// duplicate name on the same canvas is CONFLICT.
	CreateEnvironment(ctx context.Context, e *Environment) error
	GetEnvironment(ctx context.Context, workspaceID, id string) (*Environment, error)
	// FindEnvironment returns the environment p.Name of a live canvas. For
	// production it is created on demand; any other missing name is
	// NOT_FOUND.
	FindEnvironment(ctx context.Context, p FindEnvironmentParams) (*Environment, error)
	// ListEnvironments returns a canvas' environments, production first,
	// then by name.
	ListEnvironments(ctx context.Context, workspaceID, canvasID string) ([]*Environment, error)
	// DeleteEnvironment removes a custom environment and its history;
	// production, or a protected environment, is CONFLICT.
	DeleteEnvironment(ctx context.Context, workspaceID, id string) error
	// SetPolicy sets the protection of an environment of a live canvas
	// and returns the environment. The tags of a required experiment must
	// be live tags of the canvas (VALIDATION otherwise).
	SetPolicy(ctx context.Context, p PolicyParams) (*Environment, error)

	// Publish makes the version (or split) the active publication of the
	// environment in one transaction: the replaced publication gets
	// unpublishedAt, and the new one the next Seq. When the same version
	// and split are already active nothing changes and created is false.
	// The versions must be live versions of the canvas. A protected
	// environment is APPROVAL_REQUIRED, decided in the transaction: only
	// an approved publication request publishes there. The job of p.Event,
	// when written, commits with the publication.
	Publish(ctx context.Context, p PublishParams) (pub *Publication, created bool, err error)
	// ListPublications returns one page of an environment's history, newest
	// first, and the total count. It reads by Seq range, so its cost does
	// not grow with offset.
	ListPublications(ctx context.Context, workspaceID, envID string, limit, offset int) ([]*Publication, int, error)
	// GetPublication returns a publication of the environment envID;
	// another environment's, or another workspace's, is NOT_FOUND.
	GetPublication(ctx context.Context, workspaceID, envID, id string) (*Publication, error)
	// SplitStats returns the results of the runs publication id served,
	// one VariantStats per variant 0..variants-1 (a run without a variant
	// counts as variant 0), each over at most MaxStatsRuns runs.
	SplitStats(ctx context.Context, workspaceID, id string, variants int) ([]VariantStats, error)

	// CreateRequest writes a pending publication request of a live version
	// of the canvas to the environment p.EnvName (production created on
	// demand), remembering what the environment serves and when the
	// version last changed. A request for the version the environment
	// serves already is CONFLICT.
	CreateRequest(ctx context.Context, p CreateRequestParams) (*PublicationRequest, error)
	// GetRequest returns a request of a live canvas.
	GetRequest(ctx context.Context, workspaceID, id string) (*PublicationRequest, error)
	// ListRequests returns one page of requests, newest first, and how
	// many q selects.
	ListRequests(ctx context.Context, q RequestQuery) ([]*PublicationRequest, int, error)
	// DecideRequest applies a decision to a pending request in one
	// transaction (a request no longer pending is CONFLICT). Withdraw is
	// the requester's only (FORBIDDEN otherwise); approve and reject are
	// anyone's but the requester's (FORBIDDEN), and a principal approves
	// once (CONFLICT). An approval of a version changed since the request
	// was made is CONFLICT, and so is one the environment's required
	// experiment does not allow, decided in SQL in the transaction. The
	// approval that reaches the environment's required approvals (at least
	// one) publishes the version in the same transaction, with the step
	// every publish takes, and returns the publication.
	DecideRequest(ctx context.Context, p DecideParams) (*PublicationRequest, *Publication, error)
}

// FindEnvironmentParams name the environment Name of the canvas CanvasID of
// a workspace.
type FindEnvironmentParams struct {
	WorkspaceID string
	CanvasID    string
	Name        string
}
