package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/client/promptfile"
	"github.com/promptcanvas/promptcanvas/client/wire"
	"github.com/promptcanvas/promptcanvas/engine"
)

// The files of export and import (client/promptfile) hold the client's
// wire types, which encode as the domain's do, with credentials named by
// their names; these convert between them.

// credentialNames are the names and ids of a workspace's live credentials.
type credentialNames struct {
	byID, byName map[string]string
}

// workspaceCredentials reads the credentials of the workspace of ctx's
// principal (none when it has no workspace yet: a dry run's new one).
func workspaceCredentials(ctx context.Context, eng *engine.Engine) (credentialNames, error) {
	n := credentialNames{byID: map[string]string{}, byName: map[string]string{}}
	p := canvas.PrincipalFrom(ctx)
	if p == nil || p.WorkspaceID == "" {
		return n, nil
	}
	infos, err := eng.Credentials.List(ctx, p.WorkspaceID)
	if err != nil {
		return n, err
	}
	for _, ci := range infos {
		n.byID[ci.ID], n.byName[ci.Name] = ci.Name, ci.ID
	}
	return n, nil
}

// names returns the names of the credential ids of a canvas's
// allowedCredentials (nil stays nil); an id that is no live credential
// allows nothing, so it is left out.
func (n credentialNames) names(ids []string) []string {
	if ids == nil {
		return nil
	}
	out := []string{}
	for _, id := range ids {
		if name, ok := n.byID[id]; ok {
			out = append(out, name)
		}
	}
	return out
}

// ids returns the ids of the credential names of a file's
// allowedCredentials (nil stays nil); a name the workspace has no
// credential of is an error naming it.
func (n credentialNames) ids(names []string) ([]string, error) {
	if names == nil {
		return nil, nil
	}
	out := []string{}
	for _, name := range names {
		id, err := n.id(name)
		if err != nil {
			return nil, fmt.Errorf("allowedCredentials: %w", err)
		}
		out = append(out, id)
	}
	return out, nil
}

func (n credentialNames) id(name string) (string, error) {
	id, ok := n.byName[name]
	if !ok {
		return "", fmt.Errorf("the workspace has no credential named %q: create it (canvasd import never creates credentials)", name)
	}
	return id, nil
}

// fileConfiguration returns c as a file keeps it: the credential of the
// configuration and of each fallback by name (promptfile.CredentialKey). A
// credential id that is no live credential of the workspace is an error.
func fileConfiguration(c canvas.Configuration, creds credentialNames) (wire.Configuration, error) {
	var out wire.Configuration
	m, err := jsonObject(c)
	if err != nil {
		return out, err
	}
	if err := mapCredentials(m, "configuration", creds.toName); err != nil {
		return out, err
	}
	return out, remarshal(m, &out)
}

// canvasConfiguration returns a file's configuration as the domain's: the
// credential names mapped to the workspace's credentials of those names.
// A file naming a credential by id (credentialId), or a name the workspace
// has no credential of, is an error.
func canvasConfiguration(c wire.Configuration, creds credentialNames) (canvas.Configuration, error) {
	var out canvas.Configuration
	m, err := jsonObject(c)
	if err != nil {
		return out, err
	}
	if err := mapCredentials(m, "configuration", creds.toID); err != nil {
		return out, err
	}
	return out, remarshal(m, &out)
}

// toName replaces the credential id of obj (a configuration, a fallback,
// an llm node's config) with the credential's name.
func (n credentialNames) toName(obj map[string]json.RawMessage, path string) error {
	raw, ok := obj["credentialId"]
	if !ok {
		return nil
	}
	var id string
	if err := json.Unmarshal(raw, &id); err != nil {
		return fmt.Errorf("%s.credentialId: %w", path, err)
	}
	name, ok := n.byID[id]
	if !ok {
		return fmt.Errorf("%s names credential %s, which is not a live credential of the workspace", path, id)
	}
	delete(obj, "credentialId")
	obj[promptfile.CredentialKey], _ = json.Marshal(name)
	return nil
}

// toID replaces the credential name of obj (a configuration, a fallback, an
// llm node's config) with the id of the workspace's credential of that
// name.
func (n credentialNames) toID(obj map[string]json.RawMessage, path string) error {
	if _, ok := obj["credentialId"]; ok {
		return fmt.Errorf("%s.credentialId: a file names a credential by its name (%q), never by id", path, promptfile.CredentialKey)
	}
	raw, ok := obj[promptfile.CredentialKey]
	if !ok {
		return nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return fmt.Errorf("%s.%s: %w", path, promptfile.CredentialKey, err)
	}
	id, err := n.id(name)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	delete(obj, promptfile.CredentialKey)
	obj["credentialId"], _ = json.Marshal(id)
	return nil
}

// mapCredentials applies f to a configuration and to each of its
// fallbacks.
func mapCredentials(cfg map[string]json.RawMessage, path string, f func(map[string]json.RawMessage, string) error) error {
	if err := f(cfg, path); err != nil {
		return err
	}
	raw, ok := cfg["fallbacks"]
	if !ok {
		return nil
	}
	var fallbacks []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fallbacks); err != nil {
		return fmt.Errorf("%s.fallbacks: %w", path, err)
	}
	for i, fb := range fallbacks {
		if err := f(fb, fmt.Sprintf("%s.fallbacks[%d]", path, i)); err != nil {
			return err
		}
	}
	var err error
	cfg["fallbacks"], err = json.Marshal(fallbacks)
	return err
}

// mapSpecCredentials applies f to the config of each llm node of a
// workflow spec, and returns the spec, rewritten only when f changed a
// config.
func mapSpecCredentials(spec json.RawMessage, f func(map[string]json.RawMessage, string) error) (json.RawMessage, error) {
	if len(spec) == 0 {
		return spec, nil
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(spec, &s); err != nil {
		return nil, fmt.Errorf("workflowSpec: %w", err)
	}
	var nodes []map[string]json.RawMessage
	if raw, ok := s["nodes"]; !ok || json.Unmarshal(raw, &nodes) != nil {
		return spec, nil // the compiler says what is wrong with it
	}
	changed := false
	for i, n := range nodes {
		var action string
		_ = json.Unmarshal(n["actionId"], &action)
		raw, ok := n["config"]
		if action != "llm" || !ok {
			continue
		}
		var cfg map[string]json.RawMessage
		if json.Unmarshal(raw, &cfg) != nil {
			continue
		}
		_, hadID := cfg["credentialId"]
		_, hadName := cfg[promptfile.CredentialKey]
		if err := f(cfg, fmt.Sprintf("workflowSpec.nodes[%d].config", i)); err != nil {
			return nil, err
		}
		if hadID || hadName {
			changed = true
			n["config"], _ = json.Marshal(cfg)
		}
	}
	if !changed {
		return spec, nil
	}
	s["nodes"], _ = json.Marshal(nodes)
	return json.Marshal(s)
}

// jsonObject returns v encoded as a JSON object's members.
func jsonObject(v any) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// remarshal decodes the JSON object m into v.
func remarshal(m map[string]json.RawMessage, v any) error {
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

// fileVariables returns vs as a file keeps them, never nil.
func fileVariables(vs []canvas.Variable) []wire.Variable {
	out := make([]wire.Variable, 0, len(vs))
	for _, v := range vs {
		out = append(out, wire.Variable{Name: v.Name, Type: v.Type, Required: v.Required, Description: v.Description,
			ProcessingOptions: wire.ProcessingOptions{AllowMultimodal: v.ProcessingOptions.AllowMultimodal}})
	}
	return out
}

// canvasVariables returns a file's variables as the domain's, never nil.
func canvasVariables(vs []wire.Variable) []canvas.Variable {
	out := make([]canvas.Variable, 0, len(vs))
	for _, v := range vs {
		out = append(out, canvas.Variable{Name: v.Name, Type: v.Type, Required: v.Required, Description: v.Description,
			ProcessingOptions: canvas.ProcessingOptions{AllowMultimodal: v.ProcessingOptions.AllowMultimodal}})
	}
	return out
}
