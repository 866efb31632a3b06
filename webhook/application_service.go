package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// MaxApplicationNameLength bounds application names, in characters.
const MaxApplicationNameLength = 256

// DefaultSecretOverlap is how long the previous signing secret stays valid
// after a rotation unless ApplicationOptions says otherwise.
const DefaultSecretOverlap = 24 * time.Hour

// EventTypes returns every event type a subscription can filter on.
func EventTypes() []string {
	return []string{EventCompletionSucceeded, EventCompletionFailed, EventTaskSucceeded, EventTaskFailed,
		EventPublicationCreated, EventGenerationCompleted, EventWorkflowRunCompleted, EventWorkflowRunFailed,
		EventWorkflowRunPaused, EventExperimentCompleted, EventPublicationRequestCreated, EventPublicationRequestApproved,
		EventPublicationRequestRejected, EventPublicationRequestWithdrawn, EventPublicationRequestPublished, EventTest}
}

// ApplicationOptions wire an ApplicationService. Store and Canvases are
// required.
type ApplicationOptions struct {
	Store    ApplicationStore
	Canvases canvas.Store
	// SecretOverlap is how long a rotated-out secret stays valid; zero
	// means DefaultSecretOverlap.
	SecretOverlap time.Duration
}

// ApplicationService manages applications and their subscriptions. Every
// method reads the Principal from its context: viewers read, admins write.
// An application's canvas (PromptID) must be reachable by the principal
// (canvas.ReachableCanvas) when it is set or changed. An application
// follows the project rule of its canvas: a project-restricted principal
// reaches only the applications of canvases it reaches (FORBIDDEN
// otherwise), lists only those, and can neither create an application
// without a canvas nor clear one's canvas, since such an application
// belongs to no project.
type ApplicationService struct {
	store    ApplicationStore
	canvases canvas.Store
	overlap  time.Duration
}

// NewApplicationService returns an ApplicationService.
func NewApplicationService(opts ApplicationOptions) *ApplicationService {
	if opts.SecretOverlap <= 0 {
		opts.SecretOverlap = DefaultSecretOverlap
	}
	return &ApplicationService{store: opts.Store, canvases: opts.Canvases, overlap: opts.SecretOverlap}
}

// SubscriptionParams are the Events tab of an application: every field is
// optional.
type SubscriptionParams struct {
	Enabled    *bool     `json:"enabled"`
	URL        *string   `json:"url"`
	Headers    *[]Header `json:"headers"`
	EventTypes *[]string `json:"eventTypes"`
}

// CreateApplicationParams are the fields of a new application, named as in
// the body of POST /applications.
type CreateApplicationParams struct {
	Name            string              `json:"name"`
	PromptID        *string             `json:"promptId"`
	EnvironmentName *string             `json:"environmentName"`
	Events          *SubscriptionParams `json:"events"`
}

// UpdateApplicationParams are a partial update, named as in the body of
// PATCH /applications/{id}. PromptIDSet tells a null promptId (clear it)
// from an absent one.
type UpdateApplicationParams struct {
	Name            *string
	PromptID        *string
	PromptIDSet     bool
	EnvironmentName *string
	Events          *SubscriptionParams
}

// ApplicationWithSecret is an application with its signing secret: the
// answer of CreateApplication, the only time the secret is shown.
type ApplicationWithSecret struct {
	*Application
	Secret string `json:"secret"`
}

// RotatedSecret is the answer of RotateSecret: the new secret, shown once,
// and until when the previous one stays valid.
type RotatedSecret struct {
	Secret            string    `json:"secret"`
	PreviousExpiresAt time.Time `json:"previousExpiresAt"`
}

// NewSecret returns a new signing secret: "whsec_" and the standard base64
// of 32 random bytes.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// CreateApplication creates an application and its first signing secret,
// returned once. It requires the admin role.
func (s *ApplicationService) CreateApplication(ctx context.Context, params CreateApplicationParams) (*ApplicationWithSecret, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var v appValidator
	v.name("/json/name", params.Name)
	v.events("/json/events", params.Events)
	if params.PromptID != nil {
		v.uuid("/json/promptId", *params.PromptID)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	envName := canvas.ProductionEnvironment
	if params.EnvironmentName != nil {
		if envName, err = canvas.CheckEnvironmentName(*params.EnvironmentName); err != nil {
			return nil, err
		}
	}
	if params.PromptID != nil {
		if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, *params.PromptID); err != nil {
			return nil, err
		}
	} else if p.Restricted() {
		return nil, canvas.ErrOutsideProjects()
	}
	a := &Application{
		WorkspaceID: p.WorkspaceID, Name: strings.TrimSpace(params.Name), PromptID: params.PromptID,
		EnvironmentName: envName, Events: Subscription{Headers: []Header{}, EventTypes: []string{}}, CreatedBy: p.Actor(),
	}
	if e := params.Events; e != nil {
		a.Events.Enabled = e.Enabled != nil && *e.Enabled
		if e.URL != nil {
			a.Events.URL = strings.TrimSpace(*e.URL)
		}
		if e.Headers != nil {
			a.Events.Headers = *e.Headers
		}
		if e.EventTypes != nil {
			a.Events.EventTypes = *e.EventTypes
		}
	}
	secret := NewSecret()
	if err := s.store.CreateApplication(ctx, a, secret); err != nil {
		return nil, err
	}
	a.Events.HasSecret = true
	return &ApplicationWithSecret{Application: a, Secret: secret}, nil
}

// GetApplication returns an application of the principal's workspace. It
// requires the viewer role.
func (s *ApplicationService) GetApplication(ctx context.Context, id string) (*Application, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	return s.application(ctx, p, id)
}

// application returns an application of the principal's workspace that
// the principal reaches.
func (s *ApplicationService) application(ctx context.Context, p *canvas.Principal, id string) (*Application, error) {
	if uuid.Validate(id) != nil {
		return nil, canvas.NotFound("application")
	}
	a, err := s.store.GetApplication(ctx, p.WorkspaceID, id)
	if err != nil {
		return nil, err
	}
	if err := reachApplication(ctx, s.canvases, p, a); err != nil {
		return nil, err
	}
	return a, nil
}

// ListApplications returns the applications of the principal's workspace
// that it reaches, oldest first. It requires the viewer role.
func (s *ApplicationService) ListApplications(ctx context.Context) ([]*Application, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleViewer)
	if err != nil {
		return nil, err
	}
	apps, err := s.store.ListApplications(ctx, p.WorkspaceID, "")
	if err != nil || !p.Restricted() {
		return apps, err
	}
	// A restricted principal sees the applications of the canvases it
	// reaches; each canvas is read once.
	reached := map[string]bool{}
	out := apps[:0]
	for _, a := range apps {
		if a.PromptID == nil {
			continue
		}
		ok, seen := reached[*a.PromptID]
		if !seen {
			switch err := reachApplication(ctx, s.canvases, p, a); canvas.ErrorCode(err) {
			case "":
				ok = true
			case canvas.EFORBIDDEN, canvas.ENOTFOUND:
			default:
				return nil, err
			}
			reached[*a.PromptID] = ok
		}
		if ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// UpdateApplication applies a partial update; each events field given
// replaces the stored one, and enabling the subscription clears its
// disabled state and failure count. It requires the admin role.
func (s *ApplicationService) UpdateApplication(ctx context.Context, id string, params UpdateApplicationParams) (*Application, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	var v appValidator
	if params.Name != nil {
		v.name("/json/name", *params.Name)
	}
	if params.PromptID != nil {
		v.uuid("/json/promptId", *params.PromptID)
	}
	v.events("/json/events", params.Events)
	if err := v.err(); err != nil {
		return nil, err
	}
	var upd ApplicationUpdate
	if params.Name != nil {
		name := strings.TrimSpace(*params.Name)
		upd.Name = &name
	}
	if params.EnvironmentName != nil {
		name, err := canvas.CheckEnvironmentName(*params.EnvironmentName)
		if err != nil {
			return nil, err
		}
		upd.EnvironmentName = &name
	}
	if _, err := s.application(ctx, p, id); err != nil {
		return nil, err
	}
	if params.PromptIDSet {
		if params.PromptID != nil {
			if _, err := canvas.ReachableCanvas(ctx, s.canvases, p, *params.PromptID); err != nil {
				return nil, err
			}
		} else if p.Restricted() {
			return nil, canvas.ErrOutsideProjects()
		}
		upd.PromptID = &params.PromptID
	}
	if e := params.Events; e != nil {
		upd.Enabled, upd.Headers, upd.EventTypes = e.Enabled, e.Headers, e.EventTypes
		if e.URL != nil {
			u := strings.TrimSpace(*e.URL)
			upd.URL = &u
		}
	}
	return s.store.UpdateApplication(ctx, p.WorkspaceID, id, upd)
}

// DeleteApplication deletes an application and its secrets; deliveries
// already queued for it are sent no more. It requires the admin role.
func (s *ApplicationService) DeleteApplication(ctx context.Context, id string) error {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return err
	}
	if _, err := s.application(ctx, p, id); err != nil {
		return err
	}
	return s.store.DeleteApplication(ctx, p.WorkspaceID, id)
}

// RotateSecret gives the application a new signing secret, returned once;
// the previous one stays valid for the configured overlap, during which
// every delivery is signed with both. It requires the admin role.
func (s *ApplicationService) RotateSecret(ctx context.Context, id string) (*RotatedSecret, error) {
	p, err := canvas.Authorize(ctx, canvas.RoleAdmin)
	if err != nil {
		return nil, err
	}
	if _, err := s.application(ctx, p, id); err != nil {
		return nil, err
	}
	secret := NewSecret()
	expires := time.Now().UTC().Add(s.overlap)
	if err := s.store.RotateSecret(ctx, RotateSecretParams{WorkspaceID: p.WorkspaceID, ApplicationID: id,
		Secret: secret, Overlap: s.overlap}); err != nil {
		return nil, err
	}
	return &RotatedSecret{Secret: secret, PreviousExpiresAt: expires}, nil
}

// appValidator collects every problem of one request.
type appValidator struct{ details []canvas.Detail }

func (v *appValidator) add(path, format string, args ...any) {
	v.details = append(v.details, canvas.Detail{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (v *appValidator) err() error {
	if len(v.details) == 0 {
		return nil
	}
	return canvas.Invalid("Request failed validation.", v.details...)
}

func (v *appValidator) uuid(path, s string) {
	if uuid.Validate(s) != nil || len(s) != 36 {
		v.add(path, "must be a UUID")
	}
}

func (v *appValidator) name(path, s string) {
	n := utf8.RuneCountInString(strings.TrimSpace(s))
	if n == 0 || n > MaxApplicationNameLength {
		v.add(path, "must be 1 to %d characters", MaxApplicationNameLength)
	}
}

// events checks a subscription: an http(s) URL with a host (or empty),
// valid header names and values, and known event types.
func (v *appValidator) events(path string, e *SubscriptionParams) {
	if e == nil {
		return
	}
	if e.URL != nil && strings.TrimSpace(*e.URL) != "" {
		if err := CheckURL(strings.TrimSpace(*e.URL)); err != nil {
			v.add(path+"/url", "must be an absolute http or https URL")
		}
	}
	if e.Headers != nil {
		for i, h := range *e.Headers {
			switch {
			case !sendable(Header{Name: h.Name, Value: "x"}) && !reserved(strings.ToLower(h.Name)):
				v.add(fmt.Sprintf("%s/headers/%d/name", path, i), "must be a valid HTTP header name")
			case reserved(strings.ToLower(h.Name)):
				v.add(fmt.Sprintf("%s/headers/%d/name", path, i), "is set by the sender and cannot be fixed")
			case !sendable(Header{Name: "x", Value: h.Value}):
				v.add(fmt.Sprintf("%s/headers/%d/value", path, i), "must not contain control characters")
			}
		}
	}
	if e.EventTypes != nil {
		known := EventTypes()
		for i, t := range *e.EventTypes {
			if !slices.Contains(known, t) {
				v.add(fmt.Sprintf("%s/eventTypes/%d", path, i), "must be one of %s", strings.Join(known, ", "))
			}
		}
	}
}
