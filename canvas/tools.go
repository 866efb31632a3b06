package canvas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// The model vendors a credential, a version's configuration.provider and a
// fallback may name.
const (
	ProviderOpenAI           = "openai"
	ProviderAzureOpenAI      = "azure-openai"
	ProviderOpenAICompatible = "openai-compatible"
	ProviderAnthropic        = "anthropic"
	ProviderGemini           = "gemini"
	ProviderBedrock          = "bedrock"
)

// Providers lists every provider name, in the order documents list them.
var Providers = []string{ProviderOpenAI, ProviderAzureOpenAI, ProviderOpenAICompatible,
	ProviderAnthropic, ProviderGemini, ProviderBedrock}

// KnownProvider reports whether name is one of Providers.
func KnownProvider(name string) bool {
	for _, p := range Providers {
		if p == name {
			return true
		}
	}
	return false
}

// Bounds of a configuration's tools and fallbacks.
const (
	MaxFunctions = 128
	MaxFallbacks = 5
)

// Function is a tool a version declares (configuration.functions): the
// model may answer with a call of it, whose arguments match Parameters (a
// JSON Schema object; none means the function takes no arguments).
type Function struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// Tool choice modes (configuration.toolChoice); a choice of one function
// has ToolChoiceFunction and its Name.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
	ToolChoiceFunction = "function"
)

// ToolChoice says whether the model may, must or must not call a tool:
// "auto", "none", "required" as a string, or {"name": ...} for one
// function.
type ToolChoice struct {
	Mode string
	Name string
}

// MarshalJSON writes the mode as a string, or {"name": ...} for a function.
func (t ToolChoice) MarshalJSON() ([]byte, error) {
	if t.Mode == ToolChoiceFunction {
		return json.Marshal(struct {
			Name string `json:"name"`
		}{t.Name})
	}
	return json.Marshal(t.Mode)
}

// UnmarshalJSON reads a mode string or a {"name": ...} object. Any string
// is kept (Configuration.Check refuses unknown modes with a path).
func (t *ToolChoice) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*t = ToolChoice{}
		return json.Unmarshal(b, &t.Mode)
	}
	var o struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*t = ToolChoice{Mode: ToolChoiceFunction, Name: o.Name}
	return nil
}

// Fallback is a model tried, in order, when the version's own model fails
// with a retryable error; CredentialID names the credential that serves it
// (empty: resolved as the version's model is).
type Fallback struct {
	Model        string `json:"model"`
	CredentialID string `json:"credentialId,omitempty"`
}

var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkTools checks the tool, provider, credential and fallback keys of c:
// every problem is one detail under /json/configuration.
func (c *Configuration) checkTools(v *validator) {
	const base = "/json/configuration"
	for _, key := range []string{"provider", "credentialId", "functions", "toolChoice", "fallbacks"} {
		if _, ok := c.Extra[key]; ok {
			v.add(base+"/"+key, "does not match the expected shape")
		}
	}
	if c.Provider != "" && !KnownProvider(c.Provider) {
		v.add(base+"/provider", "must be one of %s", quoted(Providers))
	}
	if c.CredentialID != "" {
		v.uuid(base+"/credentialId", c.CredentialID)
	}
	if len(c.Functions) > MaxFunctions {
		v.add(base+"/functions", "must have at most %d items", MaxFunctions)
	}
	names := make(map[string]bool, len(c.Functions))
	for i, f := range c.Functions {
		p := fmt.Sprintf("%s/functions/%d", base, i)
		switch {
		case !functionName.MatchString(f.Name):
			v.add(p+"/name", "must be 1 to 64 letters, digits, underscores or dashes")
		case names[f.Name]:
			v.add(p+"/name", "duplicates the function %q", f.Name)
		}
		names[f.Name] = true
		if len(bytes.TrimSpace(f.Parameters)) == 0 || isNull(f.Parameters) {
			continue // no parameters: the function takes none
		}
		if _, err := CompileSchema(p+"/parameters", f.Parameters); err != nil {
			var e *Error
			if errors.As(err, &e) {
				v.details = append(v.details, e.Details...)
			}
		}
	}
	if t := c.ToolChoice; t != nil {
		switch t.Mode {
		case ToolChoiceAuto, ToolChoiceNone:
		case ToolChoiceRequired:
			if len(c.Functions) == 0 {
				v.add(base+"/toolChoice", "requires configuration.functions")
			}
		case ToolChoiceFunction:
			if !names[t.Name] {
				v.add(base+"/toolChoice/name", "must name one of configuration.functions")
			}
		default:
			v.add(base+"/toolChoice", `must be "auto", "none", "required" or {"name": ...}`)
		}
	}
	if len(c.Fallbacks) > MaxFallbacks {
		v.add(base+"/fallbacks", "must have at most %d items", MaxFallbacks)
	}
	for i, f := range c.Fallbacks {
		p := fmt.Sprintf("%s/fallbacks/%d", base, i)
		if strings.TrimSpace(f.Model) == "" {
			v.add(p+"/model", "is required")
		}
		if f.CredentialID != "" {
			v.uuid(p+"/credentialId", f.CredentialID)
		}
	}
}
