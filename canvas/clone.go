package canvas

import (
	"encoding/json"
	"maps"
	"slices"
)

// Clone returns a deep copy of v: no pointer, slice or map of the copy is
// shared with v, so either can be changed without affecting the other.
// Caches hand out clones of what they keep.
func (v *Version) Clone() *Version {
	if v == nil {
		return nil
	}
	c := *v
	c.Content = clonePtr(v.Content)
	c.MarkdownContent = clonePtr(v.MarkdownContent)
	c.Configuration = v.Configuration.Clone()
	c.Variables = slices.Clone(v.Variables)
	c.OriginVersionID = clonePtr(v.OriginVersionID)
	c.WorkflowSpec = cloneRaw(v.WorkflowSpec)
	c.Graph = cloneRaw(v.Graph)
	c.DeletedBy = clonePtr(v.DeletedBy)
	c.DeletedAt = clonePtr(v.DeletedAt)
	c.PromptCustomTags = slices.Clone(v.PromptCustomTags)
	if v.Message != nil {
		m := v.Message.Clone()
		c.Message = &m
	}
	if v.Messages != nil {
		c.Messages = make([]Message, len(v.Messages))
		for i := range v.Messages {
			c.Messages[i] = v.Messages[i].Clone()
		}
	}
	return &c
}

// Clone returns a deep copy of m.
func (m Message) Clone() Message {
	m.MarkdownContent = clonePtr(m.MarkdownContent)
	m.DeletedAt = clonePtr(m.DeletedAt)
	return m
}

// Clone returns a deep copy of c.
func (c Configuration) Clone() Configuration {
	c.Temperature = clonePtr(c.Temperature)
	c.MaxTokens = clonePtr(c.MaxTokens)
	c.TopP = clonePtr(c.TopP)
	if c.StructuredOutput != nil {
		so := *c.StructuredOutput
		so.Schema = cloneRaw(so.Schema)
		c.StructuredOutput = &so
	}
	if c.Functions != nil {
		fns := make([]Function, len(c.Functions))
		for i, f := range c.Functions {
			f.Parameters = cloneRaw(f.Parameters)
			fns[i] = f
		}
		c.Functions = fns
	}
	c.ToolChoice = clonePtr(c.ToolChoice)
	c.Fallbacks = slices.Clone(c.Fallbacks)
	if c.Extra != nil {
		extra := make(map[string]json.RawMessage, len(c.Extra))
		for k, v := range maps.All(c.Extra) {
			extra[k] = cloneRaw(v)
		}
		c.Extra = extra
	}
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return slices.Clone(r)
}
