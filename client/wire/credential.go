package wire

import "time"

// Providers a credential may be for.
const (
	ProviderOpenAI           = "openai"
	ProviderAzureOpenAI      = "azure-openai"
	ProviderOpenAICompatible = "openai-compatible"
	ProviderAnthropic        = "anthropic"
	ProviderGemini           = "gemini"
	ProviderBedrock          = "bedrock"
)

// Credential is a workspace's key to one model vendor, as the API shows
// it: never the key, only KeyHint ("…" and its last four characters).
type Credential struct {
	ID          string             `json:"id"`
	WorkspaceID string             `json:"workspaceId"`
	Name        string             `json:"name"`
	Provider    string             `json:"provider"`
	BaseURL     *string            `json:"baseUrl"`
	ProjectIDs  []string           `json:"projectIds"`
	Settings    CredentialSettings `json:"settings"`
	KeyHint     *string            `json:"keyHint"`
	CreatedAt   time.Time          `json:"createdAt"`
	UpdatedAt   time.Time          `json:"updatedAt"`
	CreatedBy   string             `json:"createdBy"`
	LastUsedAt  *time.Time         `json:"lastUsedAt"`
}

// CredentialSettings are what a credential holds beside its key that is
// not secret; each provider reads the fields that concern it.
type CredentialSettings struct {
	APIVersion     string            `json:"apiVersion,omitempty"`
	Deployment     string            `json:"deployment,omitempty"`
	Backend        string            `json:"backend,omitempty"`
	Project        string            `json:"project,omitempty"`
	Location       string            `json:"location,omitempty"`
	Region         string            `json:"region,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	TimeoutSeconds int               `json:"timeoutSeconds,omitempty"`
	MaxConcurrency int               `json:"maxConcurrency,omitempty"`
}

// CreateCredentialParams are the body of POST /credentials. APIKey is
// write-only: the answer never holds it.
type CreateCredentialParams struct {
	Name       string              `json:"name"`
	Provider   string              `json:"provider"`
	APIKey     *string             `json:"apiKey,omitempty"`
	BaseURL    *string             `json:"baseUrl,omitempty"`
	ProjectIDs []string            `json:"projectIds,omitempty"`
	Settings   *CredentialSettings `json:"settings,omitempty"`
}

// ModelPrice is a model's price per million tokens in USD: the bundled
// catalogue's (Source "catalogue") or the workspace's override
// ("workspace", with who set it and when).
type ModelPrice struct {
	Name             string     `json:"name"`
	Provider         string     `json:"provider"`
	InputPerMillion  float64    `json:"inputPerMillion"`
	OutputPerMillion float64    `json:"outputPerMillion"`
	Source           string     `json:"source"`
	UpdatedAt        *time.Time `json:"updatedAt"`
	UpdatedBy        *string    `json:"updatedBy"`
}

// SetModelPriceParams are the body of PUT /models/{name}.
type SetModelPriceParams struct {
	Provider         string   `json:"provider"`
	InputPerMillion  *float64 `json:"inputPerMillion"`
	OutputPerMillion *float64 `json:"outputPerMillion"`
}
