package testcase

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// validator collects every problem of one request so that a single
// VALIDATION error can list them all.
type validator struct {
	details []canvas.Detail
}

func (v *validator) add(path, format string, args ...any) {
	v.details = append(v.details, canvas.Detail{Path: path, Message: fmt.Sprintf(format, args...)})
}

// err returns the VALIDATION error listing every problem, or nil.
func (v *validator) err() error {
	if len(v.details) == 0 {
		return nil
	}
	return canvas.Invalid("Request failed validation.", v.details...)
}

// validUUID reports whether s is a UUID in its canonical 36-character form.
func validUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

func (v *validator) uuid(path, s string) bool {
	if !validUUID(s) {
		v.add(path, "must be a UUID")
		return false
	}
	return true
}

// maxLength checks that s has at most n characters (runes, not bytes).
func (v *validator) maxLength(path, s string, n int) {
	if utf8.RuneCountInString(s) > n {
		v.add(path, "must be at most %d characters", n)
	}
}

func (v *validator) title(path, s string) { v.maxLength(path, s, MaxTitleLength) }

// tagName checks a tag name: not blank, at most MaxTagNameLength characters.
func (v *validator) tagName(path, s string) {
	if strings.TrimSpace(s) == "" {
		v.add(path, "must not be empty")
		return
	}
	v.maxLength(path, s, MaxTagNameLength)
}

func (v *validator) tagColor(path, s string) { v.maxLength(path, s, MaxTagColorLength) }

// messages checks that every message has a known role.
func (v *validator) messages(path string, msgs []Message) {
	for i, m := range msgs {
		if !canvas.ValidMessageRole(m.Role) {
			v.add(fmt.Sprintf("%s/%d/role", path, i), "must be one of %s",
				quoted([]string{canvas.RoleUser, canvas.RoleAssistant, canvas.RoleSystem, canvas.RoleFunction}))
		}
	}
}

// files checks file references: a non-negative index, a vault address in
// vaultUrl and an http(s) address in url.
func (v *validator) files(path string, files []File) {
	for i, f := range files {
		p := fmt.Sprintf("%s/%d", path, i)
		if f.Index < 0 {
			v.add(p+"/index", "must be at least 0")
		}
		if f.VaultURL != "" && !strings.HasPrefix(f.VaultURL, "vault://") {
			v.add(p+"/vaultUrl", "must be a vault:// address")
		}
		if f.URL != "" {
			u, err := url.Parse(f.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				v.add(p+"/url", "must be an http or https address")
			}
		}
	}
}

// evaluator checks an evaluator: a known type, a pattern that compiles for
// regex, a schema that compiles for json-schema, and no field the type does
// not read.
func (v *validator) evaluator(path string, e *Evaluator) {
	if e == nil {
		return
	}
	if !slices.Contains(EvaluatorTypes, e.Type) {
		v.add(path+"/type", "must be one of %s", quoted(EvaluatorTypes))
		return
	}
	hasSchema := len(bytes.TrimSpace(e.Schema)) > 0 && string(bytes.TrimSpace(e.Schema)) != "null"
	if e.Type != EvaluatorRegex && e.Pattern != "" {
		v.add(path+"/pattern", "is only read by the %q evaluator", EvaluatorRegex)
	}
	if e.Type != EvaluatorJSONSchema && hasSchema {
		v.add(path+"/schema", "is only read by the %q evaluator", EvaluatorJSONSchema)
	}
	if e.Type != EvaluatorSimilarity && e.Threshold != nil {
		v.add(path+"/threshold", "is only read by the %q evaluator", EvaluatorSimilarity)
	} else if e.Threshold != nil && (*e.Threshold < 0 || *e.Threshold > 1) {
		v.add(path+"/threshold", "must be between 0 and 1")
	}
	switch e.Type {
	case EvaluatorRegex:
		if e.Pattern == "" {
			v.add(path+"/pattern", "is required by the %q evaluator", EvaluatorRegex)
		} else if utf8.RuneCountInString(e.Pattern) > MaxPatternLength {
			v.add(path+"/pattern", "must be at most %d characters", MaxPatternLength)
		} else if _, err := regexp.Compile(e.Pattern); err != nil {
			v.add(path+"/pattern", "is not a valid regular expression: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		}
	case EvaluatorJSONSchema:
		if !hasSchema {
			v.add(path+"/schema", "is required by the %q evaluator", EvaluatorJSONSchema)
		} else if _, err := canvas.CompileSchema(path+"/schema", e.Schema); err != nil {
			v.details = append(v.details, canvas.ErrorDetails(err)...)
		}
	}
}

// ids checks a list of ids for a bulk call: not empty, at most MaxBulkIDs,
// each a UUID. It returns the distinct ids in their first order.
func (v *validator) ids(path string, ids []string) []string {
	if len(ids) == 0 {
		v.add(path, "must not be empty")
		return nil
	}
	if len(ids) > MaxBulkIDs {
		v.add(path, "must hold at most %d ids", MaxBulkIDs)
		return nil
	}
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for i, id := range ids {
		if !v.uuid(fmt.Sprintf("%s/%d", path, i), id) || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}

func quoted(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return strings.Join(q, ", ")
}
