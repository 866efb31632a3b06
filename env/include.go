package env

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// Resolution bounds: a version's includes expand to at most
// MaxResolvedBytes of text together and at most MaxIncludes includes,
// nested ones counted, so that a prompt that includes the same canvas many
// times at every depth is refused rather than grown without limit.
const (
	MaxResolvedBytes = 4 << 20
	MaxIncludes      = 100
)

// IncludeSeparator joins the messages of an included version: the text
// of an include is the content of its version's live messages, in index
// order, separated by a blank line.
const IncludeSeparator = "\n\n"

// Resolution is a version with its includes ({{> CANVAS_ID}}, see
// canvas.IncludeRef) replaced, recursively, by the text of the versions
// they name.
type Resolution struct {
	// Messages are the version's live messages, in index order, with
	// every include replaced.
	Messages []canvas.Message
	// Variables are the version's definitions followed by those of each
	// included version whose name is not declared yet: an include's
	// required variables are required by the run.
	Variables []canvas.Variable
	// Includes are the includes resolved, each reference once, in the
	// order they were first met.
	Includes []canvas.Include
	// canvases are the included canvases, for the access check each
	// caller of a cached resolution repeats with its own principal.
	canvases []*canvas.Canvas
}

// Resolve replaces the includes of ver's messages for the principal of
// ctx (viewer role). Each reference resolves to the version pins records
// for it when pins has one (a run executed again, a test-case generation),
// else to what its environment serves now or to its version index. A
// missing canvas, environment, published version or version index, a
// canvas the caller cannot read, a cycle, or nesting deeper than
// canvas.MaxIncludeDepth is VALIDATION naming the chain of includes; so is
// a resolution past MaxResolvedBytes or MaxIncludes.
func (s *Service) Resolve(ctx context.Context, ver *canvas.Version, pins []canvas.Include) (*Resolution, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.resolve(ctx, p, ver, pins)
}

// CheckIncludes resolves the includes of messages about to be saved in a
// version of canvasID, as Resolve does, for canvas.Service's save checks:
// the canvas itself counts as the root of every chain, so including it is
// a cycle.
func (s *Service) CheckIncludes(ctx context.Context, canvasID string, messages []canvas.MessageContent) error {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return err
	}
	r := s.newResolver(ctx, p, nil)
	var details []canvas.Detail
	for _, m := range messages {
		for _, bad := range canvas.BadIncludes(m.Content) {
			details = append(details, canvas.Detail{Path: m.Path,
				Message: fmt.Sprintf("%q is not an include: write {{> CANVAS_ID}}, {{> CANVAS_ID@ENV}} or {{> CANVAS_ID@vN}}", bad)})
		}
		if _, err := r.expand(m.Content, []string{canvasID}, 0); err != nil {
			d, ok := r.detail(err, m.Path)
			if !ok {
				return err
			}
			details = append(details, d)
		}
	}
	if len(details) > 0 {
		return canvas.Invalid("The messages include canvases that cannot be resolved.", details...)
	}
	return nil
}

var _ canvas.IncludeChecker = (*Service)(nil)

// resolve is Resolve for principal p.
func (s *Service) resolve(ctx context.Context, p *canvas.Principal, ver *canvas.Version, pins []canvas.Include) (*Resolution, error) {
	r := s.newResolver(ctx, p, pins)
	res := &Resolution{Messages: make([]canvas.Message, 0, len(ver.Messages)), Variables: slices.Clone(ver.Variables)}
	r.vars = res.Variables
	for i, m := range ver.Messages {
		if m.DeletedAt != nil {
			continue
		}
		content, err := r.expand(m.Content, []string{ver.PromptID}, 0)
		if err != nil {
			if d, ok := r.detail(err, fmt.Sprintf("/version/messages/%d/content", i)); ok {
				return nil, canvas.Invalid("The version includes canvases that cannot be resolved.", d)
			}
			return nil, err
		}
		m.Content = content
		res.Messages = append(res.Messages, m)
	}
	res.Variables, res.Includes, res.canvases = r.vars, r.includes, r.canvases
	return res, nil
}

// includeError is a reference that cannot be resolved: why, and the chain
// of canvases (and references) that led to it.
type includeError struct {
	chain []string
	why   string
}

func (e *includeError) Error() string { return e.why }

// resolver resolves the includes of one version.
type resolver struct {
	s        *Service
	ctx      context.Context
	p        *canvas.Principal
	pins     []canvas.Include
	versions map[string]*canvas.Version // by reference, CANVAS_ID@TARGET
	vars     []canvas.Variable
	includes []canvas.Include
	canvases []*canvas.Canvas
	count    int
	bytes    int
}

func (s *Service) newResolver(ctx context.Context, p *canvas.Principal, pins []canvas.Include) *resolver {
	return &resolver{s: s, ctx: ctx, p: p, pins: pins, versions: make(map[string]*canvas.Version)}
}

// detail turns an includeError into the detail at path naming its chain;
// ok is false for any other error (a store failure).
func (r *resolver) detail(err error, path string) (canvas.Detail, bool) {
	ie, ok := err.(*includeError)
	if !ok {
		return canvas.Detail{}, false
	}
	return canvas.Detail{Path: path, Message: fmt.Sprintf("include chain %s: %s", strings.Join(ie.chain, " → "), ie.why)}, true
}

// expand returns content with its includes replaced. chain holds the
// canvases from the root to content's own; depth is content's depth.
func (r *resolver) expand(content string, chain []string, depth int) (string, error) {
	refs := canvas.ParseIncludes(content)
	if len(refs) == 0 {
		return content, nil
	}
	var b strings.Builder
	last := 0
	for _, ref := range refs {
		next := append(slices.Clone(chain), ref.String())
		if depth+1 > canvas.MaxIncludeDepth {
			return "", &includeError{chain: next, why: fmt.Sprintf("includes nest deeper than %d", canvas.MaxIncludeDepth)}
		}
		for _, c := range chain {
			if strings.HasPrefix(c, ref.CanvasID) {
				return "", &includeError{chain: next, why: "a cycle: the canvas includes itself"}
			}
		}
		r.count++
		if r.count > MaxIncludes {
			return "", &includeError{chain: next, why: fmt.Sprintf("more than %d includes", MaxIncludes)}
		}
		v, err := r.version(ref, next)
		if err != nil {
			return "", err
		}
		var text strings.Builder
		first := true
		for _, m := range v.Messages {
			if m.DeletedAt != nil {
				continue
			}
			sub, err := r.expand(m.Content, next, depth+1)
			if err != nil {
				return "", err
			}
			if !first {
				text.WriteString(IncludeSeparator)
			}
			first = false
			text.WriteString(sub)
		}
		r.bytes += text.Len()
		if r.bytes > MaxResolvedBytes {
			return "", &includeError{chain: next, why: fmt.Sprintf("the included text passes %d bytes", MaxResolvedBytes)}
		}
		b.WriteString(content[last:ref.Start])
		b.WriteString(text.String())
		last = ref.End
	}
	b.WriteString(content[last:])
	return b.String(), nil
}

// version returns the version ref names (the pinned one when pinned), and
// records it among the includes and its variables among the variables.
func (r *resolver) version(ref canvas.IncludeRef, chain []string) (*canvas.Version, error) {
	key := ref.String()
	if v, ok := r.versions[key]; ok {
		return v, nil
	}
	c, err := canvas.ReachableCanvas(r.ctx, r.s.canvases, r.p, ref.CanvasID)
	switch canvas.ErrorCode(err) {
	case "":
	case canvas.ENOTFOUND:
		return nil, &includeError{chain: chain, why: "the canvas does not exist"}
	case canvas.EFORBIDDEN:
		return nil, &includeError{chain: chain, why: "the canvas cannot be read with this token"}
	default:
		return nil, err
	}
	v, err := r.lookup(c, ref, chain)
	if err != nil {
		return nil, err
	}
	r.versions[key] = v
	r.canvases = append(r.canvases, c)
	r.includes = append(r.includes, canvas.Include{CanvasID: c.ID, Environment: ref.Environment, VersionID: v.ID,
		VersionIndex: ref.VersionIndex})
	for _, d := range v.Variables {
		if !slices.ContainsFunc(r.vars, func(x canvas.Variable) bool { return x.Name == d.Name }) {
			r.vars = append(r.vars, d)
		}
	}
	return v, nil
}

// lookup reads the version ref names on canvas c: the pinned one, the
// version index, or what the environment serves.
func (r *resolver) lookup(c *canvas.Canvas, ref canvas.IncludeRef, chain []string) (*canvas.Version, error) {
	for _, pin := range r.pins {
		if pin.Matches(ref) {
			v, err := r.s.canvases.GetVersion(r.ctx, c.WorkspaceID, pin.VersionID)
			if canvas.ErrorCode(err) == canvas.ENOTFOUND || err == nil && v.PromptID != c.ID {
				return nil, &includeError{chain: chain, why: "the pinned version no longer exists"}
			}
			return v, err
		}
	}
	if ref.VersionIndex > 0 {
		all, err := r.s.canvases.ListVersions(r.ctx, c.WorkspaceID, c.ID)
		if err != nil {
			return nil, err
		}
		for _, v := range all {
			if v.VersionIndex == ref.VersionIndex {
				return v, nil
			}
		}
		return nil, &includeError{chain: chain, why: fmt.Sprintf("the canvas has no version %d", ref.VersionIndex)}
	}
	e, err := r.s.store.FindEnvironment(r.ctx, FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
		Name: ref.Environment})
	if canvas.ErrorCode(err) == canvas.ENOTFOUND {
		return nil, &includeError{chain: chain, why: fmt.Sprintf("the canvas has no %s environment", ref.Environment)}
	} else if err != nil {
		return nil, err
	}
	if e.ActiveVersionID == nil {
		return nil, &includeError{chain: chain, why: fmt.Sprintf("nothing is published to the %s environment", ref.Environment)}
	}
	return r.s.canvases.GetVersion(r.ctx, c.WorkspaceID, *e.ActiveVersionID)
}

// checkAccess repeats, for principal p, the access check of each canvas a
// cached resolution includes: VALIDATION naming the first it cannot read.
func (res *Resolution) checkAccess(p *canvas.Principal, root string) error {
	for _, c := range res.canvases {
		if err := p.CheckCanvas(c); err != nil {
			return canvas.Invalid("The version includes canvases that cannot be resolved.", canvas.Detail{
				Path: "/version/messages", Message: fmt.Sprintf("include chain %s → %s: the canvas cannot be read with this token", root, c.ID)})
		}
	}
	return nil
}
