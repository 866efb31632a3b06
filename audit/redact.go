package audit

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Redacted replaces a secret's value in an event.
const Redacted = "[redacted]"

// secretMembers are the members whose values never reach the log, by
// their lower-cased name: a credential's key, an application's secret, an
// evaluator's webhook secret, a key's hash, a token.
var secretMembers = map[string]bool{
	"secret": true, "secrets": true, "key": true, "apikey": true, "token": true, "password": true,
	"sealed": true, "keyhash": true, "hash": true, "signingsecret": true, "authorization": true,
	"previoussecret": true, "plaintext": true,
}

// headerMembers are the members whose object holds HTTP headers: their
// names are kept and their values redacted, since a fixed header is often
// a bearer token.
var headerMembers = map[string]bool{"headers": true, "forwardheaders": true}

// Snapshot returns v as the JSON of an event's Before or After, with
// every secret redacted: the values of secretMembers at any depth, and
// the values of headerMembers' objects. A nil v is null (no resource).
func Snapshot(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(raw) == "null" {
		return nil, nil
	}
	if !maySecret(raw) {
		return raw, nil
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	if !redact(tree) {
		return raw, nil
	}
	return json.Marshal(tree)
}

// memberPatterns are the names of secretMembers and headerMembers as they
// appear in JSON, quoted: what maySecret looks for.
var memberPatterns = func() [][]byte {
	var out [][]byte
	for _, names := range []map[string]bool{secretMembers, headerMembers} {
		for name := range names {
			out = append(out, []byte(`"`+name+`"`))
		}
	}
	return out
}()

// maySecret reports whether raw may hold a member that redact blanks: it
// holds one of their names, in any case. Most states hold none, and are
// kept as they were marshalled without being decoded again.
func maySecret(raw []byte) bool {
	lower := bytes.ToLower(raw)
	for _, p := range memberPatterns {
		if bytes.Contains(lower, p) {
			return true
		}
	}
	return false
}

// redactHeaders blanks the values of headers, given as an object of
// names to values or as a list of {name, value} objects, and reports
// whether it changed anything.
func redactHeaders(v any) bool {
	changed := false
	switch h := v.(type) {
	case map[string]any:
		for k := range h {
			h[k], changed = Redacted, true
		}
	case []any:
		for _, item := range h {
			if obj, ok := item.(map[string]any); ok {
				if _, has := obj["value"]; has {
					obj["value"], changed = Redacted, true
				}
			}
		}
	}
	return changed
}

// redact blanks the secrets of a decoded JSON value in place and reports
// whether it changed anything.
func redact(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, member := range t {
			name := strings.ToLower(k)
			switch {
			case secretMembers[name]:
				if member != nil && member != "" {
					t[k] = Redacted
					changed = true
				}
			case headerMembers[name]:
				changed = redactHeaders(member) || changed
			default:
				changed = redact(member) || changed
			}
		}
	case []any:
		for _, member := range t {
			changed = redact(member) || changed
		}
	}
	return changed
}
