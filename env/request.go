package env

import (
	"time"

	"github.com/promptcanvas/promptcanvas/queue"
)

// Publication request statuses. Published, rejected and withdrawn are
// final.
const (
	RequestPending   = "pending"
	RequestPublished = "published"
	RequestRejected  = "rejected"
	RequestWithdrawn = "withdrawn"
)

// RequestStatuses lists every status of a publication request.
var RequestStatuses = []string{RequestPending, RequestPublished, RequestRejected, RequestWithdrawn}

// Steps of a publication request's life, each of which may send a webhook
// event (RequestEvents).
const (
	StepCreated   = "created"
	StepApproved  = "approved"
	StepRejected  = "rejected"
	StepWithdrawn = "withdrawn"
	StepPublished = "published"
)

// Decisions on a pending publication request.
const (
	DecisionApprove  = "approve"
	DecisionReject   = "reject"
	DecisionWithdraw = "withdraw"
)

// MaxCommentLength bounds the comment of a request or a decision, in
// bytes.
const MaxCommentLength = 2000

// PublicationRequest asks that a version, or a split of versions, be
// published to an environment. It publishes when RequiredApprovals
// principals other than its requester, and other than each other, have
// approved it. BaseVersionID is what the environment served when the
// request was made, CurrentVersionID what it serves now: Stale says a
// pending request's environment moved since, and VersionChanged that its
// version, or a version of its split, was edited since (which an approval
// refuses). Split is the split to publish, whose first entry's version is
// VersionID, or nil for a request of one version.
type PublicationRequest struct {
	ID                string       `json:"id"`
	WorkspaceID       string       `json:"-"`
	ResourceType      string       `json:"resourceType"`
	ResourceID        string       `json:"resourceId"`
	EnvironmentID     string       `json:"environmentId"`
	EnvName           string       `json:"envName"`
	VersionID         string       `json:"versionId"`
	Split             []SplitEntry `json:"split"`
	Comment           string       `json:"comment"`
	Status            string       `json:"status"`
	RequestedBy       string       `json:"requestedBy"`
	Approvals         []Approval   `json:"approvals"`
	RequiredApprovals int          `json:"requiredApprovals"`
	BaseVersionID     *string      `json:"baseVersionId"`
	CurrentVersionID  *string      `json:"currentVersionId"`
	Stale             bool         `json:"stale"`
	VersionChanged    bool         `json:"versionChanged"`
	// DiffPath is the diff of the version (a split's first) against
	// BaseVersionID (GET /prompt-version/{id}/diff), or nil when the
	// environment served nothing.
	DiffPath        *string    `json:"diffPath"`
	DecidedBy       *string    `json:"decidedBy"`
	DecisionComment string     `json:"decisionComment"`
	PublicationID   *string    `json:"publicationId"`
	CreatedAt       time.Time  `json:"createdAt"`
	UpdatedAt       time.Time  `json:"updatedAt"`
	DecidedAt       *time.Time `json:"decidedAt"`
}

// Approval is one principal's approval of a request.
type Approval struct {
	By        string    `json:"by"`
	Comment   string    `json:"comment"`
	CreatedAt time.Time `json:"createdAt"`
}

// RequestEvents are the webhook events of publication requests: the event
// type of each step (StepCreated...; a step without one sends none) and
// the job that delivers it, which the store builds inside the step's
// transaction when a subscription of the canvas takes the type, as a
// publish does (PublishEvent). Job does no I/O.
type RequestEvents struct {
	Types map[string]string
	Job   func(workspaceID, typ string, r *PublicationRequest) (*queue.Job, error)
}

// RequestEvent is the webhook event of one step of one request, as the
// store receives it.
type RequestEvent struct {
	Type string
	Job  func(r *PublicationRequest) (*queue.Job, error)
}

// CreateRequestParams is a new request as the store writes it.
type CreateRequestParams struct {
	WorkspaceID string
	CanvasID    string
	// EnvName is an already validated name; production is created on
	// demand, any other environment must exist.
	EnvName   string
	VersionID string
	// Split, when set, is a split that passed CheckSplit, whose first
	// entry VersionID is.
	Split   []SplitEntry
	Comment string
	By      string
	// Event returns the event of a step, or nil for none.
	Event func(step string) *RequestEvent
}

// DecideParams is a decision on a pending request as the store applies it.
type DecideParams struct {
	WorkspaceID string
	ID          string
	// Decision is DecisionApprove, DecisionReject or DecisionWithdraw.
	Decision string
	Comment  string
	By       string
	// Event returns the event of a step, or nil for none; Publish is the
	// event of the publication an approval makes, as Publish takes it.
	Event   func(step string) *RequestEvent
	Publish *PublishEvent
}

// RequestQuery selects a page of a workspace's requests, newest first.
type RequestQuery struct {
	WorkspaceID string
	// CanvasID and Status filter when set.
	CanvasID string
	Status   string
	// Projects limits the canvases to these projects (nil: every
	// project); the personal drafts of UserID are included.
	Projects []string
	UserID   string
	Limit    int
	Offset   int
}

// CreateRequestInput is a new publication request as a caller makes it:
// exactly one of VersionID and Split, as PublishVersionParams.
type CreateRequestInput struct {
	CanvasID string
	// EnvName is production or an existing custom environment's name.
	EnvName   string
	VersionID string
	Split     []SplitEntry
	Comment   string
}

// ListRequestsParams select a page of the caller's workspace's requests.
type ListRequestsParams struct {
	// CanvasID, when set, limits the page to one canvas the caller reaches.
	CanvasID string
	// Status, when set, is one of RequestStatuses.
	Status string
	// Limit is clamped to 1..MaxLimit; Offset below 0 is read as 0.
	Limit  int
	Offset int
}

// RequestPage is one page of requests, newest first.
type RequestPage struct {
	Items  []*PublicationRequest
	Total  int
	Limit  int
	Offset int
}
