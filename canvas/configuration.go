package canvas

import (
	"bytes"
	"encoding/json"
)

// Configuration is a version's model configuration. The known keys are typed
// fields; every other key (functions, for example) is kept verbatim in Extra
// and written back unchanged.
type Configuration struct {
	Model            string            `json:"model,omitempty"`
	Type             string            `json:"type,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        *int              `json:"maxTokens,omitempty"`
	TopP             *float64          `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput `json:"structuredOutput,omitempty"`
	// Provider names the vendor that serves Model (one of Providers) when
	// its name does not say it; CredentialID names the credential to run
	// on. Functions and ToolChoice declare tools; Fallbacks are tried in
	// order when the model fails with a retryable error.
	Provider     string                     `json:"provider,omitempty"`
	CredentialID string                     `json:"credentialId,omitempty"`
	Functions    []Function                 `json:"functions,omitempty"`
	ToolChoice   *ToolChoice                `json:"toolChoice,omitempty"`
	Fallbacks    []Fallback                 `json:"fallbacks,omitempty"`
	Extra        map[string]json.RawMessage `json:"-"`
}

// StructuredOutput asks the model for JSON that matches Schema.
type StructuredOutput struct {
	Enabled bool            `json:"enabled"`
	Schema  json.RawMessage `json:"schema,omitempty"`
}

var configurationKeys = map[string]bool{
	"model": true, "type": true, "temperature": true, "maxTokens": true, "topP": true, "structuredOutput": true,
	"provider": true, "credentialId": true, "functions": true, "toolChoice": true, "fallbacks": true,
}

// toolKeys are the keys a configuration saved before they had a meaning
// may hold in another shape: such a configuration still reads, with them
// kept in Extra, and Check refuses it when it is saved again.
var toolKeys = []string{"provider", "credentialId", "functions", "toolChoice", "fallbacks"}

// MarshalJSON writes the known keys and every extra key as one object.
func (c Configuration) MarshalJSON() ([]byte, error) {
	type known Configuration
	b, err := json.Marshal(known(c))
	emptyFunctions := c.Functions != nil && len(c.Functions) == 0
	if err != nil || (len(c.Extra) == 0 && !emptyFunctions) {
		return b, err
	}
	m := make(map[string]json.RawMessage, len(c.Extra)+6)
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range c.Extra {
		if !configurationKeys[k] || m[k] == nil {
			m[k] = v
		}
	}
	if emptyFunctions {
		// An empty list of functions reads back as it was written.
		m["functions"] = json.RawMessage("[]")
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the known keys into their fields and keeps the rest in
// Extra.
func (c *Configuration) UnmarshalJSON(b []byte) error {
	type known Configuration
	var k known
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	kept := configurationKeys
	if err := json.Unmarshal(b, &k); err != nil {
		// Read the keys that had no meaning before without them.
		for _, key := range toolKeys {
			delete(m, key)
		}
		lenient, merr := json.Marshal(m)
		if merr != nil {
			return err
		}
		k = known{}
		if json.Unmarshal(lenient, &k) != nil {
			return err
		}
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		kept = map[string]bool{}
		for key := range configurationKeys {
			kept[key] = true
		}
		for _, key := range toolKeys {
			kept[key] = false
		}
	}
	for key, v := range m {
		if !kept[key] {
			if k.Extra == nil {
				k.Extra = make(map[string]json.RawMessage)
			}
			k.Extra[key] = v
		}
	}
	*c = Configuration(k)
	return nil
}

// MergePatch applies an RFC 7386 JSON merge patch to a JSON document and
// returns the result: objects merge key by key, null removes a key, and any
// other value replaces what was there.
func MergePatch(doc, patch json.RawMessage) (json.RawMessage, error) {
	var d, p any
	if len(bytes.TrimSpace(doc)) > 0 {
		if err := json.Unmarshal(doc, &d); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, err
	}
	return json.Marshal(mergeValue(d, p))
}

func mergeValue(doc, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := doc.(map[string]any)
	if !ok {
		dm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
		} else {
			dm[k] = mergeValue(dm[k], v)
		}
	}
	return dm
}
