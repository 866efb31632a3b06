package canvas

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// RunQuery is the filter and page of a list of runs (completion runs,
// tasks, workflow runs), as its query parameters give it.
type RunQuery struct {
	// CanvasParam is the name of the canvas's query parameter ("canvasId"
	// or "promptId"); CanvasID and VersionID must be UUIDs when set.
	CanvasParam string
	CanvasID    string
	VersionID   string
	// Status must be one of Statuses when set.
	Status   string
	Statuses []string
	// Until must be after Since when both are set.
	Since, Until time.Time
	// Limit must be 1..MaxLimit, Offset not negative.
	Limit, Offset, MaxLimit int
}

// Check returns every problem of q, each at its query parameter
// (/query/<name>), or nil.
func (q RunQuery) Check() []Detail {
	var details []Detail
	for _, id := range []struct{ name, v string }{{q.CanvasParam, q.CanvasID}, {"versionId", q.VersionID}} {
		if id.v != "" && uuid.Validate(id.v) != nil {
			details = append(details, Detail{Path: "/query/" + id.name, Message: "must be a UUID"})
		}
	}
	if q.Status != "" && !slices.Contains(q.Statuses, q.Status) {
		details = append(details, Detail{Path: "/query/status", Message: "must be one of " + strings.Join(q.Statuses, ", ")})
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Until.After(q.Since) {
		details = append(details, Detail{Path: "/query/until", Message: "must be after since"})
	}
	if q.Limit < 1 || q.Limit > q.MaxLimit {
		details = append(details, Detail{Path: "/query/limit", Message: "must be between 1 and " + strconv.Itoa(q.MaxLimit)})
	}
	if q.Offset < 0 {
		details = append(details, Detail{Path: "/query/offset", Message: "must not be negative"})
	}
	return details
}
