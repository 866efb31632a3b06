package env

import (
	"regexp"
	"strings"

	"github.com/google/uuid"
	"github.com/promptcanvas/promptcanvas/canvas"
)

// MaxNameLength bounds environment names, in characters.
const MaxNameLength = 64

var (
	namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// reserved names cannot name custom environments; of them only
	// production can be published to.
	reserved = map[string]bool{Production: true, "promoted": true, "latest": true, "draft": true}
)

// nameSpace is the whitespace trimmed around an environment name: ASCII
// whitespace, the set a JSON Schema pattern can name the same way in every
// regular expression dialect (server/openapi.json says the same).
const nameSpace = " \t\n\v\f\r"

// NormalizeName trims name of ASCII whitespace and checks the name rules
// shared by every use of an environment name: lowercase letters and digits
// in segments joined by single hyphens, at most 64 characters. It returns
// INVALID_ENVIRONMENT_NAME for a name that breaks them. Reserved names pass;
// the operations that must refuse them use CheckCustomName or
// CheckPublishName.
func NormalizeName(name string) (string, error) {
	n := strings.Trim(name, nameSpace)
	switch {
	case n == "":
		return "", invalidName(name, "must not be empty")
	case len(n) > MaxNameLength:
		return "", invalidName(name, "must be at most 64 characters")
	case !namePattern.MatchString(n):
		return "", invalidName(name, "must be lowercase letters and digits in segments joined by single hyphens")
	}
	return n, nil
}

// CheckPublishName normalizes a name that selects an environment to read or
// publish to: production or a custom name. Other reserved names are invalid.
func CheckPublishName(name string) (string, error) {
	n, err := NormalizeName(name)
	if err != nil {
		return "", err
	}
	if reserved[n] && n != Production {
		return "", invalidName(name, "is reserved")
	}
	if isUUID(n) {
		return "", invalidName(name, "must not be a UUID")
	}
	return n, nil
}

// CheckCustomName normalizes the name of a new custom environment: no
// reserved name, and not a UUID.
func CheckCustomName(name string) (string, error) {
	n, err := CheckPublishName(name)
	if err != nil {
		return "", err
	}
	if n == Production {
		return "", invalidName(name, "is reserved")
	}
	return n, nil
}

func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

func invalidName(name, why string) error {
	return canvas.Errorf(canvas.EINVALIDENVNAME, "Invalid environment name %q: %s.", name, why)
}
