package model

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// ProviderFor returns the provider a model's name says serves it, or "":
// "claude-" is anthropic, "gemini-" is gemini, "gpt-", "o1", "o3", "o4"
// and "chatgpt-" are openai, and a Bedrock model id ("anthropic.",
// "amazon.", "meta.", "mistral.", "cohere.", "ai21.", "deepseek.",
// "qwen.", "openai.", or one of those behind a cross-region prefix such
// as "us.") is bedrock.
func ProviderFor(model string) string {
	switch {
	case strings.HasPrefix(model, "claude-"):
		return canvas.ProviderAnthropic
	case strings.HasPrefix(model, "gemini-"):
		return canvas.ProviderGemini
	case strings.HasPrefix(model, "gpt-"), strings.HasPrefix(model, "chatgpt-"),
		model == "o1" || strings.HasPrefix(model, "o1-"),
		model == "o3" || strings.HasPrefix(model, "o3-"),
		model == "o4" || strings.HasPrefix(model, "o4-"):
		return canvas.ProviderOpenAI
	}
	name := model
	for _, region := range []string{"us.", "eu.", "apac.", "global.", "us-gov."} {
		name = strings.TrimPrefix(name, region)
	}
	for _, vendor := range []string{"anthropic.", "amazon.", "meta.", "mistral.", "cohere.", "ai21.",
		"deepseek.", "qwen.", "openai.", "writer."} {
		if strings.HasPrefix(name, vendor) {
			return canvas.ProviderBedrock
		}
	}
	return ""
}

// Scope is what a run may use: the workspace, the projects the run belongs
// to, and the canvas's allowedCredentials (nil allows every credential the
// projects may use). A credential limited to projects serves a run of one
// of them: Projects holds the project of the run's canvas, or the projects
// of the key that runs a task; nil means a run of any project, and an
// empty list a run of none (a personal draft), which only credentials of
// every project serve.
type Scope struct {
	WorkspaceID string
	Projects    []string
	Allowed     []string
}

// CanvasScope is the scope of a run of a canvas of the project (nil: a
// personal draft) whose allowedCredentials is allowed.
func CanvasScope(workspaceID string, project *string, allowed []string) Scope {
	s := Scope{WorkspaceID: workspaceID, Projects: []string{}, Allowed: allowed}
	if project != nil {
		s.Projects = []string{*project}
	}
	return s
}

// Want is what a run asks to run on: a model, and optionally the provider
// that serves it and the credential to use. Path is the JSON pointer of
// the request field that named the model, for errors (the credential's is
// CredentialPath).
type Want struct {
	Model          string
	Provider       string
	CredentialID   string
	Path           string
	CredentialPath string
}

// Target resolves who serves want in scope, the one rule of every run
// path:
//
//   - a named credential (want.CredentialID): it must be a live credential
//     of the workspace (VALIDATION naming it otherwise) that the scope may
//     use: in Allowed when Allowed is set, and of the canvas's project when
//     it is limited to projects (FORBIDDEN naming it otherwise);
//   - else the oldest credential the scope may use whose provider serves
//     the model (want.Provider, else ProviderFor the model's name);
//   - else the Registry: the offline echo model, and the server-wide back
//     end, which stands for a built-in credential that a canvas restricted
//     by allowedCredentials does not use;
//   - else FORBIDDEN naming the oldest credential that could serve the
//     model but is outside Allowed, or VALIDATION naming the model.
func (c *Caller) Target(ctx context.Context, scope Scope, want Want) (Target, error) {
	if want.Model == "" {
		want.Model = EchoModel
	}
	if want.Path == "" {
		want.Path = "/json/model"
	}
	if want.CredentialPath == "" {
		want.CredentialPath = "/json/credentialId"
	}
	var creds []CredentialInfo
	if c.credentials != nil && (want.CredentialID != "" || want.Model != EchoModel) {
		var err error
		if creds, err = c.credentials.List(ctx, scope.WorkspaceID); err != nil {
			return Target{}, err
		}
	}
	if want.CredentialID != "" {
		i := slices.IndexFunc(creds, func(ci CredentialInfo) bool { return ci.ID == want.CredentialID })
		if i < 0 {
			return Target{}, canvas.Invalid(fmt.Sprintf("%q is not a credential of the workspace.", want.CredentialID),
				canvas.Detail{Path: want.CredentialPath, Message: "is not a credential of the workspace"})
		}
		ci := creds[i]
		if err := scope.permits(ci); err != nil {
			return Target{}, err
		}
		if want.Provider != "" && want.Provider != ci.Provider {
			return Target{}, canvas.Invalid(fmt.Sprintf("Credential %q is for %s, not %s.", ci.Name, ci.Provider, want.Provider),
				canvas.Detail{Path: want.CredentialPath, Message: "is a credential of another provider"})
		}
		return Target{Model: want.Model, Provider: ci.Provider, CredentialID: ci.ID}, nil
	}
	provider := want.Provider
	if provider == "" {
		provider = ProviderFor(want.Model)
	}
	var outside *CredentialInfo
	if provider != "" {
		for i := range creds {
			ci := &creds[i]
			if ci.Provider != provider || !inProject(ci.ProjectIDs, scope.Projects) {
				continue
			}
			if scope.Allowed != nil && !slices.Contains(scope.Allowed, ci.ID) {
				if outside == nil {
					outside = ci
				}
				continue
			}
			if _, ok := c.kinds[ci.Provider]; !ok {
				continue
			}
			return Target{Model: want.Model, Provider: ci.Provider, CredentialID: ci.ID}, nil
		}
	}
	if want.Provider == "" || want.Model == EchoModel {
		if p, err := c.providers.Resolve(want.Model); err == nil && (scope.Allowed == nil || p.Name() == EchoModel) {
			return Target{Model: want.Model}, nil
		}
	}
	if outside != nil {
		return Target{}, forbidden(*outside)
	}
	msg := fmt.Sprintf("No credential of the workspace serves model %q.", want.Model)
	if provider != "" {
		msg = fmt.Sprintf("No %s credential the canvas may use serves model %q.", provider, want.Model)
	}
	return Target{}, canvas.Invalid(msg, canvas.Detail{Path: want.Path, Message: "no credential the canvas may use serves this model"})
}

// permits returns FORBIDDEN naming ci when the scope may not use it.
func (s Scope) permits(ci CredentialInfo) error {
	if s.Allowed != nil && !slices.Contains(s.Allowed, ci.ID) {
		return forbidden(ci)
	}
	if !inProject(ci.ProjectIDs, s.Projects) {
		return canvas.Errorf(canvas.EFORBIDDEN, "Credential %q (%s) is limited to other projects than the canvas's.", ci.Name, ci.ID)
	}
	return nil
}

func forbidden(ci CredentialInfo) error {
	return canvas.Errorf(canvas.EFORBIDDEN, "Credential %q (%s) is not in the canvas's allowedCredentials.", ci.Name, ci.ID)
}

// inProject reports whether a credential limited to projects (nil: not
// limited) may serve a run of runProjects (nil: any).
func inProject(projects, runProjects []string) bool {
	if projects == nil || runProjects == nil {
		return true
	}
	for _, p := range runProjects {
		if slices.Contains(projects, p) {
			return true
		}
	}
	return false
}
