package canvas

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// Kinds of a difference.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// VersionDiff is what changes from the version AgainstID (before) to the
// version VersionID (after): messages by position in their order, variables
// by name, and the configuration by JSON pointer (RFC 6901) to each value
// that differs, objects and arrays compared member by member. Identical is
// set when there is no difference of any of the three.
type VersionDiff struct {
	VersionID     string          `json:"versionId"`
	AgainstID     string          `json:"againstId"`
	Identical     bool            `json:"identical"`
	Messages      []MessageChange `json:"messages"`
	Variables     []VariableDiff  `json:"variables"`
	Configuration []ValueChange   `json:"configuration"`
}

// MessageChange is a message added, removed or changed at position Index
// of the versions' ordered messages.
type MessageChange struct {
	Index  int            `json:"index"`
	Change string         `json:"change"`
	Before *MessageFields `json:"before"`
	After  *MessageFields `json:"after"`
}

// MessageFields are what a message says.
type MessageFields struct {
	Role            string  `json:"role"`
	Content         string  `json:"content"`
	MarkdownContent *string `json:"markdownContent"`
	Index           int     `json:"index"`
}

// VariableDiff is a variable added, removed or changed, by name.
type VariableDiff struct {
	Name   string    `json:"name"`
	Change string    `json:"change"`
	Before *Variable `json:"before"`
	After  *Variable `json:"after"`
}

// ValueChange is a configuration value added, removed or changed at Path,
// a JSON pointer into the configuration.
type ValueChange struct {
	Path   string          `json:"path"`
	Change string          `json:"change"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// Diff returns what changes from before to after.
func Diff(before, after *Version) (*VersionDiff, error) {
	d := &VersionDiff{VersionID: after.ID, AgainstID: before.ID, Messages: []MessageChange{},
		Variables: []VariableDiff{}, Configuration: []ValueChange{}}
	for i := range max(len(before.Messages), len(after.Messages)) {
		c := MessageChange{Index: i}
		if i < len(before.Messages) {
			c.Before = messageFields(&before.Messages[i])
		}
		if i < len(after.Messages) {
			c.After = messageFields(&after.Messages[i])
		}
		switch {
		case c.Before == nil:
			c.Change = ChangeAdded
		case c.After == nil:
			c.Change = ChangeRemoved
		case !sameMessage(c.Before, c.After):
			c.Change = ChangeChanged
		default:
			continue
		}
		d.Messages = append(d.Messages, c)
	}
	d.Variables = diffVariables(before.Variables, after.Variables)
	b, err := json.Marshal(before.Configuration)
	if err != nil {
		return nil, err
	}
	a, err := json.Marshal(after.Configuration)
	if err != nil {
		return nil, err
	}
	var bv, av any
	if err := json.Unmarshal(b, &bv); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(a, &av); err != nil {
		return nil, err
	}
	if err := diffValues("", bv, av, &d.Configuration); err != nil {
		return nil, err
	}
	d.Identical = len(d.Messages) == 0 && len(d.Variables) == 0 && len(d.Configuration) == 0
	return d, nil
}

func messageFields(m *Message) *MessageFields {
	return &MessageFields{Role: m.Role, Content: m.Content, MarkdownContent: m.MarkdownContent, Index: m.Index}
}

// sameMessage compares two messages' fields, markdown by value.
func sameMessage(a, b *MessageFields) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Index == b.Index &&
		(a.MarkdownContent == nil) == (b.MarkdownContent == nil) &&
		(a.MarkdownContent == nil || *a.MarkdownContent == *b.MarkdownContent)
}

// diffVariables pairs variables by name, in the order of after then the
// removed ones in the order of before.
func diffVariables(before, after []Variable) []VariableDiff {
	out := []VariableDiff{}
	old := map[string]*Variable{}
	for i := range before {
		old[before[i].Name] = &before[i]
	}
	seen := map[string]bool{}
	for i := range after {
		a := &after[i]
		seen[a.Name] = true
		switch b, ok := old[a.Name]; {
		case !ok:
			out = append(out, VariableDiff{Name: a.Name, Change: ChangeAdded, After: a})
		case *b != *a:
			out = append(out, VariableDiff{Name: a.Name, Change: ChangeChanged, Before: b, After: a})
		}
	}
	for i := range before {
		if b := &before[i]; !seen[b.Name] {
			out = append(out, VariableDiff{Name: b.Name, Change: ChangeRemoved, Before: b})
		}
	}
	return out
}

// diffValues appends the differences of two decoded JSON values at path:
// objects member by member (in name order), arrays element by element, any
// other value whole.
func diffValues(path string, b, a any, out *[]ValueChange) error {
	bo, bObj := b.(map[string]any)
	ao, aObj := a.(map[string]any)
	if bObj && aObj {
		keys := make([]string, 0, len(bo)+len(ao))
		for k := range bo {
			keys = append(keys, k)
		}
		for k := range ao {
			if _, ok := bo[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			bv, inB := bo[k]
			av, inA := ao[k]
			p := path + "/" + escapePointer(k)
			switch {
			case !inB:
				if err := appendChange(out, p, ChangeAdded, nil, av); err != nil {
					return err
				}
			case !inA:
				if err := appendChange(out, p, ChangeRemoved, bv, nil); err != nil {
					return err
				}
			default:
				if err := diffValues(p, bv, av, out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	ba, bArr := b.([]any)
	aa, aArr := a.([]any)
	if bArr && aArr {
		for i := range max(len(ba), len(aa)) {
			p := path + "/" + strconv.Itoa(i)
			switch {
			case i >= len(ba):
				if err := appendChange(out, p, ChangeAdded, nil, aa[i]); err != nil {
					return err
				}
			case i >= len(aa):
				if err := appendChange(out, p, ChangeRemoved, ba[i], nil); err != nil {
					return err
				}
			default:
				if err := diffValues(p, ba[i], aa[i], out); err != nil {
					return err
				}
			}
		}
		return nil
	}
	bj, err := json.Marshal(b)
	if err != nil {
		return err
	}
	aj, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if !bytes.Equal(bj, aj) {
		*out = append(*out, ValueChange{Path: path, Change: ChangeChanged, Before: bj, After: aj})
	}
	return nil
}

// appendChange appends an added or removed value (nil on the side where
// it is missing).
func appendChange(out *[]ValueChange, path, change string, b, a any) error {
	c := ValueChange{Path: path, Change: change}
	var err error
	if b != nil || change == ChangeRemoved {
		if c.Before, err = json.Marshal(b); err != nil {
			return err
		}
	}
	if a != nil || change == ChangeAdded {
		if c.After, err = json.Marshal(a); err != nil {
			return err
		}
	}
	*out = append(*out, c)
	return nil
}

// escapePointer escapes a member name as a JSON pointer token.
func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// DiffVersionsParams name the two versions of a diff.
type DiffVersionsParams struct {
	// VersionID is the version after the change, AgainstID the one before.
	VersionID string
	AgainstID string
}

// DiffVersions returns what changes from the version AgainstID to the
// version VersionID. Both must be versions the caller reaches (of any
// canvas of the workspace). It requires the viewer role.
func (s *Service) DiffVersions(ctx context.Context, params DiffVersionsParams) (*VersionDiff, error) {
	p, err := Authorize(ctx, RoleViewer)
	if err != nil {
		return nil, err
	}
	after, err := s.version(ctx, p, params.VersionID)
	if err != nil {
		return nil, err
	}
	before, err := s.version(ctx, p, params.AgainstID)
	if err != nil {
		return nil, err
	}
	return Diff(before, after)
}
