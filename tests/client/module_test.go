package clienttest

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// clientModule is the client module's path; clientDir is its directory.
const (
	clientModule = "github.com/promptcanvas/promptcanvas/client"
	clientDir    = "../../client"
)

// allowedRequirements are the modules the client module may require. A
// program that calls the server builds the client and these only, so a
// module joins this list only when it is small and worth it.
var allowedRequirements = []string{}

// goIn runs the go command in the client module's directory, outside any
// workspace, and returns its standard output.
func goIn(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = clientDir
	cmd.Env = append(cmd.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return out
}

// TestModule_Requirements: the client module requires only the allowed
// modules and replaces nothing (it never reaches into the server's module).
func TestModule_Requirements(t *testing.T) {
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
		Replace []struct{ Old struct{ Path string } }
	}
	if err := json.Unmarshal(goIn(t, "mod", "edit", "-json"), &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != clientModule {
		t.Errorf("client/go.mod is module %q, want %q", mod.Module.Path, clientModule)
	}
	for _, r := range mod.Require {
		if !slices.Contains(allowedRequirements, r.Path) {
			t.Errorf("client/go.mod requires %s: the client may require only %v", r.Path, allowedRequirements)
		}
	}
	for _, r := range mod.Replace {
		t.Errorf("client/go.mod replaces %s", r.Old.Path)
	}
}

// TestModule_Dependencies: the client's packages and their tests import
// the standard library, the client module's own packages and the allowed
// modules' packages only, never a package of the server's module.
func TestModule_Dependencies(t *testing.T) {
	out := goIn(t, "list", "-deps", "-test", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...")
	var own int
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// "p [p.test]" is p built for a test; "p.test" and "p_test" are a
		// test's main and external test packages.
		path, _, _ := strings.Cut(line, " ")
		rest, ok := strings.CutPrefix(path, clientModule)
		switch {
		case ok && (rest == "" || strings.ContainsAny(rest[:1], "/._")):
			own++
		case slices.ContainsFunc(allowedRequirements, func(m string) bool { return path == m || strings.HasPrefix(path, m+"/") }):
		default:
			t.Errorf("the client module depends on %s", path)
		}
	}
	if own == 0 {
		t.Fatalf("go list found no package of the client module:\n%s", out)
	}
}
