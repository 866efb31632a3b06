package env

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/internal/freshcache"
	"github.com/promptcanvas/promptcanvas/queue"
)

// History page bounds: a page holds DefaultLimit publications unless the
// caller asks otherwise, and never fewer than 1 or more than MaxLimit.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// Service publishes versions to environments, manages custom environments
// and reads their history. Every method authorizes the principal of the
// context: viewers read, editors publish and create or delete environments.
// The canvas is loaded and checked first, so a canvas of a project the
// principal cannot access is FORBIDDEN, and a canvas of another workspace or
// someone else's personal draft is NOT_FOUND.
type Service struct {
	store    Store
	canvases canvas.Store

	// event, when set, is the webhook event of each publication Publish
	// creates; eventNotify is called once its job committed, published
	// after every publish that created a publication.
	event       *PublicationEvent
	eventNotify func()
	published   func(ctx context.Context, workspaceID string, pub *Publication)
	// requestEvents, when set, are the webhook events of publication
	// requests.
	requestEvents *RequestEvents

	// served caches what ActiveVersion reads; nil (no caching) unless both
	// stores are one canvas.ChangeVersioner.
	served *freshcache.Cache[servedKey, release]

	// changes is signalled after every publish and environment deletion.
	changes notifier
}

// servedKey identifies one ActiveVersion read: the canvas is read for the
// principal's workspace and user.
type servedKey struct {
	workspaceID, canvasID, envName, userID string
}

// release is a cached read of what an environment serves: the canvas, kept
// for the access check every request repeats with its own principal, the
// active publication, and one served version per entry of its split (one
// for a publication of one version). All are read-only.
type release struct {
	canvas        *canvas.Canvas
	publicationID string
	split         []SplitEntry
	variants      []served
}

// served is one version an environment serves, and its JSON, encoded once
// when first asked for. All are read-only; callers get a clone of the
// version or a copy of the JSON.
type served struct {
	canvas  *canvas.Canvas
	version *canvas.Version
	json    *servedJSON
	// resolution is the version with its includes replaced, nil when it
	// has none or they do not resolve (resolveErr says why); it is built
	// with the cached read, so the same freshness proof covers it.
	resolution *Resolution
	resolveErr error
}

// servedJSON is a version's JSON and its ETag, and its resolved JSON,
// encoded at most once.
type servedJSON struct {
	once     sync.Once
	raw      []byte
	resolved []byte
	etag     string
	err      error
}

// servedCacheSize bounds the ActiveVersion cache.
const servedCacheSize = 1024

// Options wire a Service. Store and Canvases are required.
type Options struct {
	Store    Store
	Canvases canvas.Store
	// Changes proves cached reads fresh: the served versions ActiveVersion
	// reads are cached, each use proven by one data-version read, so a
	// publish, a rollback, an edit or a move of the canvas is seen on the
	// very next call. It must see every commit of both stores; nil caches
	// nothing.
	Changes canvas.ChangeVersioner
	// Event is the webhook event of each publication Publish creates (not
	// when the version was already active): its job commits with the
	// publication when a subscription takes it (PublishEvent). Notify, when
	// set, is called after a publish that wrote that job, to wake the queue
	// worker.
	Event  *PublicationEvent
	Notify func()
	// Published, when set, is called with the request's context after each
	// publish that created a publication, once it committed.
	Published func(ctx context.Context, workspaceID string, pub *Publication)
	// RequestEvents are the webhook events of publication requests' steps,
	// whose jobs commit with the steps; Notify is called after a step
	// that wrote one.
	RequestEvents *RequestEvents
}

// NewService returns a Service.
func NewService(opts Options) *Service {
	return &Service{
		store:         opts.Store,
		canvases:      opts.Canvases,
		event:         opts.Event,
		eventNotify:   opts.Notify,
		published:     opts.Published,
		requestEvents: opts.RequestEvents,
		served:        freshcache.New[servedKey, release](opts.Changes, servedCacheSize),
	}
}

// PublicationEvent is the webhook event of every publication Publish
// creates: PublishEvent for a workspace. The webhook notifier's
// CanvasEventJob builds publication.created this way.
type PublicationEvent struct {
	// Type is the event type a subscription must take.
	Type string
	// Job returns the job that delivers the event of pub. It runs inside
	// the publish's transaction and does no I/O.
	Job func(workspaceID string, pub *Publication) (*queue.Job, error)
}

// CreateEnvironmentParams names a new custom environment of a canvas.
type CreateEnvironmentParams struct {
	CanvasID string
	// Name is trimmed and must follow the custom name rules.
	Name string
}

// PublishVersionParams says which version, or which split of versions, to
// publish to which environment: exactly one of VersionID and Split.
type PublishVersionParams struct {
	CanvasID string
	// EnvName is production or an existing custom environment's name.
	EnvName   string
	VersionID string
	// Split serves MinSplit to MaxSplit versions by weight (CheckSplit);
	// the publication's VersionID is its first entry's.
	Split []SplitEntry
}

// PromoteVersion publishes a version of a canvas to production, as Publish
// does (a no-op when it is already active): the canvas.Promoter of
// canvas.Options.Promoter, so that promoting a version through its update is
// a publication like any other.
func (s *Service) PromoteVersion(ctx context.Context, canvasID, versionID string) error {
	_, _, err := s.Publish(ctx, PublishVersionParams{CanvasID: canvasID, EnvName: Production, VersionID: versionID})
	return err
}

var _ canvas.Promoter = (*Service)(nil)

// HistoryParams selects one page of an environment's publication history.
type HistoryParams struct {
	CanvasID string
	// EnvName is production (created on demand) or an existing custom
	// environment's name.
	EnvName string
	// Limit is clamped to 1..MaxLimit; callers pass DefaultLimit when the
	// user gave none.
	Limit int
	// Offset below 0 is read as 0, the same way Limit is clamped.
	Offset int
}

// ActiveVersionParams selects an environment whose served version is read.
type ActiveVersionParams struct {
	CanvasID string
	EnvName  string
	// Resolve serves the version with resolvedMessages and includes
	// (ResolvedVersion); its includes must resolve for the caller.
	Resolve bool
	// AssignmentKey picks the version of a split (Assign): the same key
	// gets the same version while the publication is active; without one
	// each read draws. It must pass CheckAssignmentKey.
	AssignmentKey string
	// Stable, for a read without an AssignmentKey, serves a split's first
	// entry with an ETag that covers every entry instead of drawing: the
	// watch reports a split so, and its state changes only when what the
	// split serves does.
	Stable bool
}

// Page is one page of an environment's publication history, newest first.
// Limit and Offset are the values actually used, after clamping.
type Page struct {
	Environment *Environment
	Items       []*Publication
	Total       int
	Limit       int
	Offset      int
}

// CreateEnvironment creates a custom environment. The name must pass
// CheckCustomName (INVALID_ENVIRONMENT_NAME otherwise); a name the canvas
// already uses is CONFLICT. It requires the editor role.
func (s *Service) CreateEnvironment(ctx context.Context, params CreateEnvironmentParams) (*Environment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, err
	}
	name, err := CheckCustomName(params.Name)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, err
	}
	e := &Environment{
		Name:         name,
		ResourceType: ResourcePrompt,
		ResourceID:   c.ID,
		WorkspaceID:  c.WorkspaceID,
		CreatedBy:    p.Actor(),
	}
	if err := s.store.CreateEnvironment(ctx, e); err != nil {
		return nil, err
	}
	return e, nil
}

// ListEnvironments returns the environments of a canvas, production first,
// each with the id of the version it serves. Production is created on
// demand, so the list always holds it.
func (s *Service) ListEnvironments(ctx context.Context, canvasID string) ([]*Environment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, canvasID)
	if err != nil {
		return nil, err
	}
	if _, err := s.store.FindEnvironment(ctx, FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
		Name: Production}); err != nil {
		return nil, err
	}
	return s.store.ListEnvironments(ctx, c.WorkspaceID, c.ID)
}

// DeleteEnvironment deletes a custom environment and its history. The
// production environment, and a protected one, cannot be deleted
// (CONFLICT), nor one that live versions of other canvases include
// ({{> ID@ENV}}) unless opts force it (CONFLICT listing them). It requires
// the editor role.
func (s *Service) DeleteEnvironment(ctx context.Context, id string, opts ...canvas.DeleteOptions) error {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return err
	}
	e, err := s.reachableEnvironment(ctx, p, id)
	if err != nil {
		return err
	}
	if e.IsSystem {
		return canvas.Errorf(canvas.ECONFLICT, "The %s environment cannot be deleted.", e.Name)
	}
	deps, err := canvas.ListDependents(ctx, s.canvases, p.WorkspaceID, e.ResourceID)
	if err != nil {
		return err
	}
	if err := canvas.RefuseDependents(deps, "environment", opts, func(d canvas.Dependent) bool {
		return d.Environment == e.Name
	}); err != nil {
		return err
	}
	if err := s.store.DeleteEnvironment(ctx, p.WorkspaceID, id); err != nil {
		return err
	}
	s.changes.notify()
	return nil
}

// checkTarget checks what a publish or a publication request names:
// exactly one of a version and a split (VALIDATION otherwise), the split
// passing CheckSplit.
func checkTarget(versionID string, split []SplitEntry) error {
	if (versionID == "") == (len(split) == 0) {
		return canvas.Invalid("Give either versionId or split.",
			canvas.Detail{Path: "/json/versionId", Message: "exactly one of versionId and split is required"})
	}
	if split != nil {
		return CheckSplit(split)
	}
	return nil
}

// Publish makes a version of the canvas, or a split of versions, the active
// publication of the named environment, and returns that publication.
// created is false when the same version and split were already active, in
// which case nothing changes; publishing one version ends a split.
// Publishing to production makes the version (a split's first) the canvas'
// promoted version. Exactly one of VersionID and Split is given
// (VALIDATION otherwise); a split must pass CheckSplit and name live
// versions of the canvas (VALIDATION at the entry). It requires the editor
// role.
func (s *Service) Publish(ctx context.Context, params PublishVersionParams) (pub *Publication, created bool, err error) {
	p, err := canvas.Authorize(ctx, canvas.RoleEditor)
	if err != nil {
		return nil, false, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return nil, false, err
	}
	if err := checkTarget(params.VersionID, params.Split); err != nil {
		return nil, false, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, false, err
	}
	pp := PublishParams{
		WorkspaceID: c.WorkspaceID,
		CanvasID:    c.ID,
		EnvName:     name,
		VersionID:   params.VersionID,
		Split:       params.Split,
		By:          p.Actor(),
	}
	wrote := false
	if ev := s.event; ev != nil {
		pp.Event = &PublishEvent{Type: ev.Type, Job: func(pub *Publication) (*queue.Job, error) {
			j, err := ev.Job(c.WorkspaceID, pub)
			wrote = j != nil
			return j, err
		}}
	}
	pub, created, err = s.store.Publish(ctx, pp)
	if err != nil {
		return nil, false, err
	}
	if wrote && created && s.eventNotify != nil {
		s.eventNotify()
	}
	if created {
		s.changes.notify()
		if s.published != nil {
			s.published(ctx, c.WorkspaceID, pub)
		}
	}
	return pub, created, nil
}

// History returns one page of an environment's publication history, newest
// first. Production is created on demand, so a fresh canvas has an empty
// production history; any other environment must exist (NOT_FOUND).
func (s *Service) History(ctx context.Context, params HistoryParams) (*Page, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return nil, err
	}
	c, err := s.canvas(ctx, p, params.CanvasID)
	if err != nil {
		return nil, err
	}
	e, err := s.store.FindEnvironment(ctx, FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
		Name: name})
	if err != nil {
		return nil, err
	}
	limit, offset := ClampLimit(params.Limit), max(params.Offset, 0)
	items, total, err := s.store.ListPublications(ctx, c.WorkspaceID, e.ID, limit, offset)
	if err != nil {
		return nil, err
	}
	return &Page{Environment: e, Items: items, Total: total, Limit: limit, Offset: offset}, nil
}

// ActiveVersion returns the version the named environment serves, in full:
// messages, variables, configuration, its position in the canvas history and
// its workspace; of a split, the one params.AssignmentKey is assigned
// (AssignVersion). It is NOT_FOUND when the environment does not exist or
// has nothing published. The caller owns the version it gets.
func (s *Service) ActiveVersion(ctx context.Context, params ActiveVersionParams) (*canvas.Version, error) {
	a, err := s.AssignVersion(ctx, params)
	if err != nil {
		return nil, err
	}
	return a.Version, nil
}

// Assignment is the version an environment serves to one request, and the
// publication that serves it.
type Assignment struct {
	Version       *canvas.Version
	PublicationID string
	// Variant is, for a split publication, the 0-based position of the
	// entry that serves the version; nil for a publication of one version.
	Variant *int
}

// AssignVersion is ActiveVersion with the publication and, for a split,
// the variant the request was assigned. The caller owns the version.
func (s *Service) AssignVersion(ctx context.Context, params ActiveVersionParams) (*Assignment, error) {
	sv, a, err := s.activeServed(ctx, params)
	if err != nil {
		return nil, err
	}
	a.Version = sv.version.Clone()
	return &a, nil
}

// ActiveVersionJSON is ActiveVersion encoded as JSON the way the server
// writes every body: encoding/json's Encoder with HTML escaping off, so a
// newline ends it. A cached read is encoded once; the caller owns the bytes.
func (s *Service) ActiveVersionJSON(ctx context.Context, params ActiveVersionParams) ([]byte, error) {
	sv, _, err := s.activeServed(ctx, params)
	if err != nil {
		return nil, err
	}
	raw, _, err := sv.encoded()
	if err != nil {
		return nil, err
	}
	return slices.Clone(raw), nil
}

// activeServed authorizes the caller and returns the served read, from the
// cache when it is fresh: of a split, the variant params assign, and the
// assignment without its version.
func (s *Service) activeServed(ctx context.Context, params ActiveVersionParams) (served, Assignment, error) {
	rel, err := s.activeRelease(ctx, params)
	if err != nil {
		return served{}, Assignment{}, err
	}
	sv, a := rel.assign(params)
	return sv, a, nil
}

// assign returns the version of rel that serves a read with params, and
// the assignment without its version.
func (rel release) assign(params ActiveVersionParams) (served, Assignment) {
	a := Assignment{PublicationID: rel.publicationID}
	if rel.split == nil {
		return rel.variants[0], a
	}
	i := 0
	if params.AssignmentKey != "" || !params.Stable {
		i = Assign(rel.split, rel.publicationID, params.AssignmentKey)
	}
	a.Variant = &i
	return rel.variants[i], a
}

// activeRelease authorizes the caller and returns what the environment
// serves, from the cache when it is fresh.
func (s *Service) activeRelease(ctx context.Context, params ActiveVersionParams) (release, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return release{}, err
	}
	name, err := CheckPublishName(params.EnvName)
	if err != nil {
		return release{}, err
	}
	if err := CheckAssignmentKey(params.AssignmentKey, "/query/assignmentKey"); err != nil {
		return release{}, err
	}
	key := servedKey{workspaceID: p.WorkspaceID, canvasID: params.CanvasID, envName: name, userID: p.UserID}
	rel, err := s.served.Get(ctx, key, func(ctx context.Context) (release, error) {
		return s.readRelease(ctx, p, params.CanvasID, name)
	})
	if err != nil {
		return release{}, err
	}
	// A cached read may have been built for another principal: the access
	// check runs for every call, with the caller's own.
	if err := p.CheckCanvas(rel.canvas); err != nil {
		return release{}, err
	}
	return rel, nil
}

// readRelease reads the canvas, checking that p may reach it, and the
// versions its named environment serves.
func (s *Service) readRelease(ctx context.Context, p *canvas.Principal, canvasID, name string) (release, error) {
	c, err := s.canvas(ctx, p, canvasID)
	if err != nil {
		return release{}, err
	}
	e, err := s.store.FindEnvironment(ctx, FindEnvironmentParams{WorkspaceID: c.WorkspaceID, CanvasID: c.ID,
		Name: name})
	if err != nil {
		return release{}, err
	}
	if e.ActiveVersionID == nil {
		return release{}, canvas.Errorf(canvas.ENOTFOUND, "Nothing is published to the %s environment.", e.Name)
	}
	rel := release{canvas: c, publicationID: e.ActivePublicationID, split: e.Split}
	ids := []string{*e.ActiveVersionID}
	if e.Split != nil {
		ids = ids[:0]
		for _, en := range e.Split {
			ids = append(ids, en.VersionID)
		}
	}
	for _, id := range ids {
		sv, err := s.readServed(ctx, p, c, id)
		if err != nil {
			return release{}, err
		}
		rel.variants = append(rel.variants, sv)
	}
	return rel, nil
}

// readServed reads version id of canvas c, which an environment serves,
// and resolves its includes.
func (s *Service) readServed(ctx context.Context, p *canvas.Principal, c *canvas.Canvas, id string) (served, error) {
	v, err := s.canvases.GetVersion(ctx, c.WorkspaceID, id)
	if err != nil {
		return served{}, err
	}
	v.WorkspaceID = c.WorkspaceID
	sv := served{canvas: c, version: v, json: &servedJSON{}}
	if canvas.VersionHasIncludes(v) {
		// Resolved for the user across every project, so that one entry
		// serves each key of the user: every call checks the included
		// canvases with its own principal (Resolution.checkAccess).
		all := *p
		all.Projects = nil
		sv.resolution, sv.resolveErr = s.resolve(ctx, &all, v, nil)
		if sv.resolveErr != nil && canvas.ErrorCode(sv.resolveErr) != canvas.EINVALID {
			return served{}, sv.resolveErr
		}
	}
	return sv, nil
}

// ClampLimit bounds a history page size to 1..MaxLimit.
func ClampLimit(limit int) int {
	return min(max(limit, 1), MaxLimit)
}

// canvas loads a live canvas and checks that the principal may reach it.
func (s *Service) canvas(ctx context.Context, p *canvas.Principal, id string) (*canvas.Canvas, error) {
	return canvas.ReachableCanvas(ctx, s.canvases, p, id)
}

// SetPolicyParams are the whole protection of an environment.
type SetPolicyParams struct {
	ID string
	// Protected false clears the policy; RequiredApprovals and
	// RequiredExperiment are then refused.
	Protected bool
	// RequiredApprovals must be MinApprovals..MaxApprovals; zero with
	// Protected means MinApprovals.
	RequiredApprovals int
	// RequiredExperiment, when set, gates every approval: its MinPassRate
	// is 0..1, its TagIDs live tags of the canvas.
	RequiredExperiment *RequiredExperiment
}

// SetPolicy sets the protection of an environment (production included)
// and returns it. From then on a publish to a protected environment by any
// path is APPROVAL_REQUIRED; it changes only through publication requests.
// It requires the admin role.
func (s *Service) SetPolicy(ctx context.Context, params SetPolicyParams) (*Environment, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var details []canvas.Detail
	if params.Protected {
		if params.RequiredApprovals == 0 {
			params.RequiredApprovals = MinApprovals
		}
		if params.RequiredApprovals < MinApprovals || params.RequiredApprovals > MaxApprovals {
			details = append(details, canvas.Detail{Path: "/json/requiredApprovals",
				Message: fmt.Sprintf("must be between %d and %d", MinApprovals, MaxApprovals)})
		}
		if x := params.RequiredExperiment; x != nil {
			if x.MinPassRate < 0 || x.MinPassRate > 1 {
				details = append(details, canvas.Detail{Path: "/json/requiredExperiment/minPassRate",
					Message: "must be between 0 and 1"})
			}
			x.TagIDs = slices.Compact(slices.Sorted(slices.Values(x.TagIDs)))
		}
	} else {
		if params.RequiredApprovals != 0 {
			details = append(details, canvas.Detail{Path: "/json/requiredApprovals", Message: "needs protected: true"})
		}
		if params.RequiredExperiment != nil {
			details = append(details, canvas.Detail{Path: "/json/requiredExperiment", Message: "needs protected: true"})
		}
	}
	if details != nil {
		return nil, canvas.Invalid("Request failed validation.", details...)
	}
	e, err := s.reachableEnvironment(ctx, p, params.ID)
	if err != nil {
		return nil, err
	}
	return s.store.SetPolicy(ctx, PolicyParams{WorkspaceID: e.WorkspaceID, ID: e.ID, Protected: params.Protected,
		RequiredApprovals: params.RequiredApprovals, RequiredExperiment: params.RequiredExperiment})
}

// reachableEnvironment returns an environment of a canvas p may reach; an
// environment of a canvas p may not see is NOT_FOUND.
func (s *Service) reachableEnvironment(ctx context.Context, p *canvas.Principal, id string) (*Environment, error) {
	e, err := s.store.GetEnvironment(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if _, err := s.canvas(ctx, p, e.ResourceID); err != nil {
		if canvas.ErrorCode(err) == canvas.ENOTFOUND {
			return nil, canvas.NotFound("environment")
		}
		return nil, err
	}
	return e, nil
}
