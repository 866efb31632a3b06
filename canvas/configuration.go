package canvas

import (
	"bytes"
	"encoding/json"
)

// Configuration is a version's model configuration. The known keys are typed
// fields; every other key (functions, for example) is kept verbatim in Extra
// and written back unchanged.
type Configuration struct {
	Model            string                     `json:"model,omitempty"`
	Type             string                     `json:"type,omitempty"`
	Temperature      *float64                   `json:"temperature,omitempty"`
	MaxTokens        *int                       `json:"maxTokens,omitempty"`
	TopP             *float64                   `json:"topP,omitempty"`
	StructuredOutput *StructuredOutput          `json:"structuredOutput,omitempty"`
	Extra            map[string]json.RawMessage `json:"-"`
}

// StructuredOutput asks the model for JSON that matches Schema.
type StructuredOutput struct {
	Enabled bool            `json:"enabled"`
	Schema  json.RawMessage `json:"schema,omitempty"`
}

var configurationKeys = map[string]bool{
	"model": true, "type": true, "temperature": true, "maxTokens": true, "topP": true, "structuredOutput": true,
}

// MarshalJSON writes the known keys and every extra key as one object.
func (c Configuration) MarshalJSON() ([]byte, error) {
	type known Configuration
	b, err := json.Marshal(known(c))
	if err != nil || len(c.Extra) == 0 {
		return b, err
	}
	m := make(map[string]json.RawMessage, len(c.Extra)+6)
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range c.Extra {
		if !configurationKeys[k] {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads the known keys into their fields and keeps the rest in
// Extra.
func (c *Configuration) UnmarshalJSON(b []byte) error {
	type known Configuration
	var k known
	if err := json.Unmarshal(b, &k); err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	for key, v := range m {
		if !configurationKeys[key] {
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
