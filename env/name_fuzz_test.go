package env_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
)

// nameShape is what an accepted environment name looks like.
var nameShape = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// FuzzNormalizeName checks the name rules on any input: an accepted name
// is the trimmed input, follows the shape and the length bound, and is
// accepted again as it is; every refusal is INVALID_ENVIRONMENT_NAME; and
// the stricter checks accept only names the looser ones accept.
func FuzzNormalizeName(f *testing.F) {
	for _, s := range []string{"production", " staging ", "qa-2", "Prod", "a--b", "-a", "draft",
		"8e03978e-40d5-43e8-bc93-6894a57f9324", strings.Repeat("a", 65), "\tüben\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		n, err := env.NormalizeName(name)
		if err != nil {
			if code := canvas.ErrorCode(err); code != canvas.EINVALIDENVNAME {
				t.Fatalf("NormalizeName(%q): code %s", name, code)
			}
		} else {
			if n != strings.TrimSpace(name) {
				t.Fatalf("NormalizeName(%q) = %q, not the trimmed input", name, n)
			}
			if len(n) > env.MaxNameLength || !nameShape.MatchString(n) {
				t.Fatalf("NormalizeName(%q) accepted %q", name, n)
			}
			if again, err := env.NormalizeName(n); err != nil || again != n {
				t.Fatalf("NormalizeName(%q) = %q, %v: not stable", n, again, err)
			}
		}
		p, perr := env.CheckPublishName(name)
		if perr == nil && (err != nil || p != n) {
			t.Fatalf("CheckPublishName(%q) = %q accepts what NormalizeName does not", name, p)
		}
		if perr != nil && canvas.ErrorCode(perr) != canvas.EINVALIDENVNAME {
			t.Fatalf("CheckPublishName(%q): code %s", name, canvas.ErrorCode(perr))
		}
		c, cerr := env.CheckCustomName(name)
		if cerr == nil && (perr != nil || c != p || c == env.Production) {
			t.Fatalf("CheckCustomName(%q) = %q accepts what CheckPublishName does not", name, c)
		}
		if cerr != nil && canvas.ErrorCode(cerr) != canvas.EINVALIDENVNAME {
			t.Fatalf("CheckCustomName(%q): code %s", name, canvas.ErrorCode(cerr))
		}
	})
}
