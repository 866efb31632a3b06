package wire

import "time"

// Publication request statuses.
const (
	RequestPending   = "pending"
	RequestPublished = "published"
	RequestRejected  = "rejected"
	RequestWithdrawn = "withdrawn"
)

// PublicationRequestParams is the body of POST /publication-requests: a
// version of a canvas, or a split of its versions, to publish to one of
// its environments; exactly one of VersionID and Split, as in
// PublishRequest.
type PublicationRequestParams struct {
	ResourceType string       `json:"resourceType"`
	ResourceID   string       `json:"resourceId"`
	EnvName      string       `json:"envName"`
	VersionID    string       `json:"versionId,omitempty"`
	Split        []SplitEntry `json:"split,omitempty"`
	Comment      string       `json:"comment,omitempty"`
}

// DecisionParams is the body of POST /publication-requests/{id}/approve,
// /reject and /withdraw.
type DecisionParams struct {
	Comment string `json:"comment,omitempty"`
}

// PublicationRequest asks that a version, or a split of versions, be
// published to an environment; it publishes when RequiredApprovals
// principals other than its requester, and other than each other, approved
// it. Split is nil for a request of one version; with one, VersionID is
// its first entry's. Stale says that the environment serves another
// version than when the request was made, VersionChanged that the version,
// or a version of the split, was edited since (approval then refuses it).
type PublicationRequest struct {
	ID                string       `json:"id"`
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
	DiffPath          *string      `json:"diffPath"`
	DecidedBy         *string      `json:"decidedBy"`
	DecisionComment   string       `json:"decisionComment"`
	PublicationID     *string      `json:"publicationId"`
	CreatedAt         time.Time    `json:"createdAt"`
	UpdatedAt         time.Time    `json:"updatedAt"`
	DecidedAt         *time.Time   `json:"decidedAt"`
}

// Approval is one principal's approval of a publication request.
type Approval struct {
	By        string    `json:"by"`
	Comment   string    `json:"comment"`
	CreatedAt time.Time `json:"createdAt"`
}
