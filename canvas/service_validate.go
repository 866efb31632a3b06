package canvas

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// validator collects every problem of one request so that a single
// VALIDATION error can list them all.
type validator struct {
	details []Detail
}

func (v *validator) add(path, format string, args ...any) {
	v.details = append(v.details, Detail{Path: path, Message: fmt.Sprintf(format, args...)})
}

// err returns the VALIDATION error listing every problem, or nil.
func (v *validator) err() error {
	if len(v.details) == 0 {
		return nil
	}
	return Invalid("Request failed validation.", v.details...)
}

// requiredTitle checks a title that must be given: not blank, at most
// MaxTitleLength characters (runes, not bytes).
func (v *validator) requiredTitle(path, s string) {
	if strings.TrimSpace(s) == "" {
		v.add(path, "is required")
		return
	}
	v.titleLength(path, s)
}

func (v *validator) titleLength(path, s string) {
	if utf8.RuneCountInString(s) > MaxTitleLength {
		v.add(path, "must be at most %d characters", MaxTitleLength)
	}
}

func (v *validator) uuid(path, s string) bool {
	if _, err := uuid.Parse(s); err != nil || len(s) != 36 {
		v.add(path, "must be a UUID")
		return false
	}
	return true
}

func (v *validator) layoutVersion(path, s string) {
	if s != LayoutV1 && s != LayoutV2 {
		v.add(path, "must be one of %q, %q", LayoutV1, LayoutV2)
	}
}

var decimalPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// inferencesPercentage checks a decimal string between 0 and 100.
func (v *validator) inferencesPercentage(path, s string) {
	if !decimalPattern.MatchString(s) {
		v.add(path, "must be a decimal string between 0 and 100")
		return
	}
	if f, err := strconv.ParseFloat(s, 64); err != nil || f > 100 {
		v.add(path, "must be a decimal string between 0 and 100")
	}
}

// customTags checks that every tag is non-blank and at most MaxTitleLength
// characters.
func (v *validator) customTags(path string, tags []string) {
	for i, t := range tags {
		p := fmt.Sprintf("%s/%d", path, i)
		if strings.TrimSpace(t) == "" {
			v.add(p, "must not be empty")
		} else {
			v.titleLength(p, t)
		}
	}
}

// credentials checks that every allowed credential is a UUID.
func (v *validator) credentials(path string, ids []string) {
	for i, id := range ids {
		v.uuid(fmt.Sprintf("%s/%d", path, i), id)
	}
}

// variables checks variable definitions: non-blank unique names and a type
// of VariableTypes. It returns a copy in which an empty type is "text", and
// a non-nil slice for a nil one.
func (v *validator) variables(path string, vars []Variable) []Variable {
	out := make([]Variable, len(vars))
	seen := make(map[string]bool, len(vars))
	for i, vr := range vars {
		p := fmt.Sprintf("%s/%d", path, i)
		if strings.TrimSpace(vr.Name) == "" {
			v.add(p+"/name", "must not be empty")
		} else if seen[vr.Name] {
			v.add(p+"/name", "duplicates the name of another variable")
		}
		seen[vr.Name] = true
		if vr.Type == "" {
			vr.Type = VariableText
		} else if !slices.Contains(VariableTypes, vr.Type) {
			v.add(p+"/type", "must be one of %s", quoted(VariableTypes))
		}
		out[i] = vr
	}
	return out
}

// message checks a message's role and index; path is the message's own
// pointer ("/json/message").
func (v *validator) message(path, role string, index int) {
	v.role(path+"/role", role)
	v.index(path+"/index", index)
}

func (v *validator) role(path, role string) {
	if !ValidMessageRole(role) {
		v.add(path, "must be one of %s", quoted([]string{RoleUser, RoleAssistant, RoleSystem, RoleFunction}))
	}
}

func (v *validator) index(path string, index int) {
	if index < 0 {
		v.add(path, "must be at least 0")
	}
}

// object checks that raw JSON is an object.
func (v *validator) object(path string, raw []byte) {
	if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' {
		v.add(path, "must be an object")
	}
}

func quoted(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = strconv.Quote(it)
	}
	return strings.Join(q, ", ")
}

// isNull reports whether raw JSON is absent or null.
func isNull(raw []byte) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || string(b) == "null"
}
