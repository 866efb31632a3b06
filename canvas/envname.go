package canvas

import (
	"regexp"
	"strings"

	"github.com/google/uuid"
)

// ProductionEnvironment is the system environment every canvas has, the
// one a promoted version is published to, and the environment an
// application serves unless it names another.
const ProductionEnvironment = "production"

// MaxEnvironmentNameLength bounds environment names, in characters.
const MaxEnvironmentNameLength = 64

var (
	envNamePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// reservedEnvNames cannot name custom environments; of them only
	// production can be published to.
	reservedEnvNames = map[string]bool{ProductionEnvironment: true, "promoted": true, "latest": true, "draft": true}
)

// envNameSpace is the whitespace trimmed around an environment name: ASCII
// whitespace, the set a JSON Schema pattern can name the same way in every
// regular expression dialect (server/openapi.json says the same).
const envNameSpace = " \t\n\v\f\r"

// NormalizeEnvironmentName trims name of ASCII whitespace and checks the
// name rules shared by every use of an environment name: lowercase letters
// and digits in segments joined by single hyphens, at most 64 characters.
// It returns INVALID_ENVIRONMENT_NAME for a name that breaks them. Reserved
// names pass; the operations that must refuse them use
// CheckCustomEnvironmentName or CheckEnvironmentName.
func NormalizeEnvironmentName(name string) (string, error) {
	n := strings.Trim(name, envNameSpace)
	switch {
	case n == "":
		return "", invalidEnvName(name, "must not be empty")
	case len(n) > MaxEnvironmentNameLength:
		return "", invalidEnvName(name, "must be at most 64 characters")
	case !envNamePattern.MatchString(n):
		return "", invalidEnvName(name, "must be lowercase letters and digits in segments joined by single hyphens")
	}
	return n, nil
}

// CheckEnvironmentName normalizes a name that selects an environment to
// read or publish to: production or a custom name. Other reserved names
// are invalid.
func CheckEnvironmentName(name string) (string, error) {
	n, err := NormalizeEnvironmentName(name)
	if err != nil {
		return "", err
	}
	if reservedEnvNames[n] && n != ProductionEnvironment {
		return "", invalidEnvName(name, "is reserved")
	}
	if isUUIDString(n) {
		return "", invalidEnvName(name, "must not be a UUID")
	}
	return n, nil
}

// CheckCustomEnvironmentName normalizes the name of a new custom
// environment: no reserved name, and not a UUID.
func CheckCustomEnvironmentName(name string) (string, error) {
	n, err := CheckEnvironmentName(name)
	if err != nil {
		return "", err
	}
	if n == ProductionEnvironment {
		return "", invalidEnvName(name, "is reserved")
	}
	return n, nil
}

func isUUIDString(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

func invalidEnvName(name, why string) error {
	return Errorf(EINVALIDENVNAME, "Invalid environment name %q: %s.", name, why)
}
