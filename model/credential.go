package model

import (
	"context"
	"net/http"
	"time"
)

// Credential is a workspace's key to one model vendor, opened: what a
// provider needs to call the vendor on the workspace's behalf. APIKey is
// the secret itself; it is held in memory only while a provider uses it,
// and never written to a log, an error or an answer.
type Credential struct {
	ID          string
	WorkspaceID string
	Name        string
	// Provider is one of the canvas.Provider* names.
	Provider string
	APIKey   string
	// BaseURL replaces the vendor's default API root (a local model, a
	// proxy, a test's fake vendor); empty keeps the default.
	BaseURL  string
	Settings Settings
}

// Settings are what a credential holds beside its key that is not secret.
// Each provider reads the fields that concern it and ignores the others.
type Settings struct {
	// APIVersion and Deployment are Azure OpenAI's api-version and
	// deployment name (empty: the model's name).
	APIVersion string `json:"apiVersion,omitempty"`
	Deployment string `json:"deployment,omitempty"`
	// Backend is Gemini's "gemini-api" (default) or "vertex"; Project and
	// Location name the Vertex project and region.
	Backend  string `json:"backend,omitempty"`
	Project  string `json:"project,omitempty"`
	Location string `json:"location,omitempty"`
	// Region is the AWS region of Bedrock.
	Region string `json:"region,omitempty"`
	// Headers are sent with every request to the vendor.
	Headers map[string]string `json:"headers,omitempty"`
	// TimeoutSeconds bounds one call (0: DefaultCallTimeout);
	// MaxConcurrency bounds the calls in flight on this credential across
	// the process (0: DefaultMaxConcurrency).
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
}

// Defaults of a credential's settings.
const (
	DefaultCallTimeout    = 5 * time.Minute
	DefaultMaxConcurrency = 16
)

// Timeout returns the bound of one call on the credential.
func (s Settings) Timeout() time.Duration {
	if s.TimeoutSeconds > 0 {
		return time.Duration(s.TimeoutSeconds) * time.Second
	}
	return DefaultCallTimeout
}

// Concurrency returns the bound of the calls in flight on the credential.
func (s Settings) Concurrency() int {
	if s.MaxConcurrency > 0 {
		return s.MaxConcurrency
	}
	return DefaultMaxConcurrency
}

// Factory builds the Provider that calls a vendor with an opened
// credential. Each provider package offers one (for example
// anthropic.Factory); an embedder registers those it links (Kinds), so
// that it links only the vendor SDKs it uses. A provider built by a
// Factory makes one attempt per call: the Caller retries, bounds the time
// and the concurrency.
type Factory func(Credential) (Provider, error)

// Kinds maps provider names (canvas.Provider*) to their factories.
type Kinds map[string]Factory

// CredentialInfo is what resolving a run's credential needs to know of a
// credential: never its key.
type CredentialInfo struct {
	ID       string
	Name     string
	Provider string
	// ProjectIDs limits the credential to these projects; nil means every
	// project of the workspace.
	ProjectIDs []string
	CreatedAt  time.Time
}

// Credentials are a workspace's credentials, as the Caller uses them. The
// credential package implements it over the store; the Caller reads no
// Principal, so neither does it.
type Credentials interface {
	// List returns every live credential of workspaceID, oldest first.
	List(ctx context.Context, workspaceID string) ([]CredentialInfo, error)
	// Open returns the opened credential id of workspaceID, with its key
	// unsealed, and when it last changed (a provider built from an older
	// state of the credential is rebuilt); NOT_FOUND when the workspace
	// has no such live credential.
	Open(ctx context.Context, workspaceID, id string) (*Credential, time.Time, error)
	// Used records that the credential served a call, for its lastUsedAt;
	// it may coalesce writes, and its failure is not the call's.
	Used(ctx context.Context, workspaceID, id string)
}

// VendorTransport is the transport a provider calls its vendor through
// unless given a client of its own: the default one, waiting at most
// timeout for the answer's headers.
func VendorTransport(timeout time.Duration) http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.ResponseHeaderTimeout = timeout
	return t
}

// VendorClient returns client, or when it is nil a client of
// VendorTransport(timeout).
func VendorClient(client *http.Client, timeout time.Duration) *http.Client {
	if client != nil {
		return client
	}
	return &http.Client{Transport: VendorTransport(timeout)}
}
