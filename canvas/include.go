package canvas

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// MaxIncludeDepth bounds how deep includes nest: a version's includes are
// depth 1, theirs depth 2, and an include at depth MaxIncludeDepth+1 is
// refused.
const MaxIncludeDepth = 5

// IncludeRef is one include tag of a message's content:
//
//	{{> CANVAS_ID}}       the version production serves
//	{{> CANVAS_ID@ENV}}   the version environment ENV serves
//	{{> CANVAS_ID@vN}}    version N of the canvas history (VersionIndex)
//
// Blanks are allowed after "{{>" and before "}}". A reference whose env
// part is "v" followed by digits names a version index, so an environment
// with such a name cannot be included by name.
type IncludeRef struct {
	CanvasID string
	// Environment is the environment named, "" when VersionIndex is set.
	Environment string
	// VersionIndex is the version index named, 0 when none.
	VersionIndex int
	// Start and End are the tag's span in the content.
	Start, End int
}

// Target is the reference as written after the canvas id: the
// environment, or "v" and the version index.
func (r IncludeRef) Target() string {
	if r.VersionIndex > 0 {
		return "v" + strconv.Itoa(r.VersionIndex)
	}
	return r.Environment
}

// String is the reference as CANVAS_ID@TARGET.
func (r IncludeRef) String() string {
	return r.CanvasID + "@" + r.Target()
}

// Include is what one include of a run resolved to: the canvas, the
// environment that served it ("" for a version index), and the version.
// Runs record them, and a run that is executed again resolves each
// reference to the version recorded for it.
type Include struct {
	CanvasID    string `json:"canvasId"`
	Environment string `json:"environment,omitempty"`
	VersionID   string `json:"versionId"`
	// VersionIndex is the version index the reference named, 0 when it
	// named an environment.
	VersionIndex int `json:"versionIndex,omitempty"`
}

// Matches reports whether the pinned include answers ref.
func (in Include) Matches(ref IncludeRef) bool {
	return in.CanvasID == ref.CanvasID && in.Environment == ref.Environment && in.VersionIndex == ref.VersionIndex
}

// HasIncludes reports whether content may hold an include tag: a cheap
// test before ParseIncludes.
func HasIncludes(content string) bool {
	return strings.Contains(content, "{{>")
}

// VersionHasIncludes reports whether a live message of v may hold an
// include tag.
func VersionHasIncludes(v *Version) bool {
	for i := range v.Messages {
		if v.Messages[i].DeletedAt == nil && HasIncludes(v.Messages[i].Content) {
			return true
		}
	}
	return false
}

// ParseIncludes returns the include tags of content in order. A "{{>"
// that does not continue as a well-formed tag (a UUID, an optional
// "@name" following the environment name rules, "}}") is not an include
// and stays text; BadIncludes reports those.
func ParseIncludes(content string) []IncludeRef {
	refs, _ := parseIncludes(content)
	return refs
}

// BadIncludes returns the text of each "{{>" tag of content that is not a
// well-formed include, for save checks to name.
func BadIncludes(content string) []string {
	_, bad := parseIncludes(content)
	return bad
}

func parseIncludes(content string) (refs []IncludeRef, bad []string) {
	from := 0
	for {
		i := strings.Index(content[from:], "{{>")
		if i < 0 {
			return refs, bad
		}
		start := from + i
		end := strings.Index(content[start:], "}}")
		if end < 0 {
			bad = append(bad, clip(content[start:]))
			return refs, bad
		}
		end += start + 2
		ref, ok := parseIncludeBody(strings.TrimSpace(content[start+3 : end-2]))
		if ok {
			ref.Start, ref.End = start, end
			refs = append(refs, ref)
		} else {
			bad = append(bad, clip(content[start:end]))
		}
		from = end
	}
}

func parseIncludeBody(body string) (IncludeRef, bool) {
	id, target, hasTarget := strings.Cut(body, "@")
	if !isUUIDString(id) {
		return IncludeRef{}, false
	}
	ref := IncludeRef{CanvasID: strings.ToLower(id), Environment: ProductionEnvironment}
	if !hasTarget {
		return ref, true
	}
	if len(target) > 1 && target[0] == 'v' && strings.Trim(target[1:], "0123456789") == "" {
		n, ok := versionIndexTarget(target)
		if !ok {
			return IncludeRef{}, false
		}
		ref.Environment, ref.VersionIndex = "", n
		return ref, true
	}
	name, err := CheckEnvironmentName(target)
	if err != nil || name != target {
		return IncludeRef{}, false
	}
	ref.Environment = name
	return ref, true
}

// versionIndexTarget reads "vN" with N a positive integer.
func versionIndexTarget(s string) (int, bool) {
	if len(s) < 2 || s[0] != 'v' {
		return 0, false
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n < 1 || strconv.Itoa(n) != s[1:] {
		return 0, false
	}
	return n, true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// IncludeChecker checks the includes of messages about to be saved in a
// version of canvasID: each must resolve, for the principal of ctx,
// without a cycle and within MaxIncludeDepth. It returns VALIDATION naming
// every problem and its chain; env.Service implements it.
type IncludeChecker interface {
	CheckIncludes(ctx context.Context, canvasID string, messages []MessageContent) error
}

// MessageContent is a message's content at the JSON pointer of the
// request that gave it, for an IncludeChecker to name.
type MessageContent struct {
	Path    string
	Content string
}

// Dependent is one include of a canvas by a live version of another
// canvas: which version includes it, and through which reference.
type Dependent struct {
	CanvasID     string `json:"canvasId"`
	VersionID    string `json:"versionId"`
	VersionIndex int    `json:"versionIndex"`
	// Environment is the environment the include names, "" when it names
	// a version index (IncludedVersionIndex).
	Environment          string `json:"environment,omitempty"`
	IncludedVersionIndex int    `json:"includedVersionIndex,omitempty"`
}

// IncluderStore is the part of the Store that finds who includes a canvas.
type IncluderStore interface {
	// ListIncluders returns the live versions of the workspace's live
	// canvases other than canvasID whose live messages may include it,
	// filled as GetVersion fills them, a bounded number of them.
	ListIncluders(ctx context.Context, workspaceID, canvasID string) ([]*Version, error)
}

// Dependents returns the includes of canvas id by live versions of other
// canvases, by canvas and history. It requires the viewer role and access
// to the canvas; an includer the caller cannot reach is listed too, by
// id, since it is what a deletion would break.
func (s *Service) Dependents(ctx context.Context, id string) ([]Dependent, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, id); err != nil {
		return nil, err
	}
	return s.dependents(ctx, p.WorkspaceID, id)
}

func (s *Service) dependents(ctx context.Context, workspaceID, id string) ([]Dependent, error) {
	return ListDependents(ctx, s.store, workspaceID, id)
}

// ListDependents reads the includes of canvas id by live versions of the
// workspace's other canvases.
func ListDependents(ctx context.Context, store IncluderStore, workspaceID, id string) ([]Dependent, error) {
	versions, err := store.ListIncluders(ctx, workspaceID, id)
	if err != nil {
		return nil, err
	}
	out := []Dependent{}
	for _, v := range versions {
		seen := map[IncludeRef]bool{}
		for _, m := range v.Messages {
			for _, ref := range ParseIncludes(m.Content) {
				ref.Start, ref.End = 0, 0
				if ref.CanvasID != id || seen[ref] {
					continue
				}
				seen[ref] = true
				out = append(out, Dependent{CanvasID: v.PromptID, VersionID: v.ID, VersionIndex: v.VersionIndex,
					Environment: ref.Environment, IncludedVersionIndex: ref.VersionIndex})
			}
		}
	}
	return out, nil
}

// DeleteOptions tune a deletion of something others may include.
type DeleteOptions struct {
	// Force deletes even when live versions of other canvases include
	// what is deleted; their includes then fail until they are changed.
	Force bool
}

// RefuseDependents returns CONFLICT listing the dependents that keep
// (refers to) something from being deleted or unpublished, or nil when
// none does or opts forces it. Each detail is at /dependents/<i>.
func RefuseDependents(deps []Dependent, what string, opts []DeleteOptions, keep func(Dependent) bool) error {
	for _, o := range opts {
		if o.Force {
			return nil
		}
	}
	var details []Detail
	for _, d := range deps {
		if !keep(d) {
			continue
		}
		ref := "v" + strconv.Itoa(d.IncludedVersionIndex)
		if d.IncludedVersionIndex == 0 {
			ref = d.Environment
		}
		details = append(details, Detail{Path: "/dependents/" + strconv.Itoa(len(details)),
			Message: fmt.Sprintf("canvas %s version %d (%s) includes it at %s", d.CanvasID, d.VersionIndex, d.VersionID, ref)})
	}
	if len(details) == 0 {
		return nil
	}
	return &Error{Code: ECONFLICT, Message: fmt.Sprintf("Other canvases include this %s; pass force=true to %s it anyway.",
		what, "remove"), Details: details}
}
