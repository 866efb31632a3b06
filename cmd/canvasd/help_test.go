package main

import (
	"bytes"
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCmd runs canvasd with args in an empty environment and returns what
// it wrote and returned.
func runCmd(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, getenv(nil), &out, &errOut)
	return out.String(), errOut.String(), err
}

func TestRun_Help(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"help", "--help", "-help", "-h"} {
		t.Run(arg, func(t *testing.T) {
			stdout, stderr, err := runCmd(arg)
			require.NoError(t, err)
			assert.Empty(t, stderr)
			for _, c := range commands {
				assert.Contains(t, stdout, "canvasd "+c.name+" ", "the help lists %q", c.name)
			}
			for _, v := range envVars {
				assert.Contains(t, stdout, v.name, "the help lists %s", v.name)
			}
		})
	}
}

func TestRun_CommandHelp(t *testing.T) {
	t.Parallel()
	// Every command's --help prints its usage line and its flags, and
	// succeeds (main exits 0 on flag.ErrHelp).
	for _, c := range commands {
		if c.run == nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			args := append(strings.Fields(c.name), "--help")
			_, stderr, err := runCmd(args...)
			assert.ErrorIs(t, err, flag.ErrHelp)
			assert.Contains(t, stderr, commandLine(c))
			assert.Contains(t, stderr, c.summary)
			assert.Contains(t, stderr, "Flags:")
		})
	}
	t.Run("ServeFlags", func(t *testing.T) {
		_, stderr, err := runCmd("serve", "-h")
		assert.ErrorIs(t, err, flag.ErrHelp)
		for _, name := range []string{"-addr", "-data", "-metrics-addr", "-run-retention"} {
			assert.Contains(t, stderr, name)
		}
	})
}

func TestRun_Groups(t *testing.T) {
	t.Parallel()
	t.Run("KeysHelp", func(t *testing.T) {
		stdout, _, err := runCmd("keys", "--help")
		require.NoError(t, err)
		for _, name := range []string{"keys create", "keys list", "keys revoke"} {
			c, ok := lookupCommand(name)
			require.True(t, ok)
			assert.Contains(t, stdout, commandLine(c))
		}
	})
	t.Run("KeysWithoutCommand", func(t *testing.T) {
		_, stderr, err := runCmd("keys")
		assert.ErrorIs(t, err, errUsage)
		assert.Contains(t, stderr, "canvasd keys: missing command")
		assert.Contains(t, stderr, "canvasd keys create")
	})
	t.Run("KeysUnknownCommand", func(t *testing.T) {
		_, stderr, err := runCmd("keys", "rotate")
		assert.ErrorIs(t, err, errUsage)
		assert.Contains(t, stderr, `unknown command "keys rotate"`)
	})
	t.Run("UnknownCommand", func(t *testing.T) {
		_, stderr, err := runCmd("frobnicate")
		assert.ErrorIs(t, err, errUsage)
		assert.Contains(t, stderr, `unknown command "frobnicate"`)
		assert.Contains(t, stderr, "canvasd keys create")
	})
}

// TestEnvVars_Complete checks the help's table of environment variables
// against the code: every CANVAS_ or OTEL_ name a file of canvasd spells
// is in the table, every name in the table is read somewhere, and every
// flag the table names is a flag of canvasd serve.
func TestEnvVars_Complete(t *testing.T) {
	t.Parallel()
	names := regexp.MustCompile(`^(CANVAS|OTEL)_[A-Z0-9_]+$`)
	paths, err := filepath.Glob("*.go")
	require.NoError(t, err)
	read := map[string]string{} // name -> a file that spells it
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") || path == "help.go" {
			continue
		}
		file, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && names.MatchString(s) {
					read[s] = path
				}
			}
			return true
		})
	}
	require.NotEmpty(t, read)

	listed := map[string]bool{}
	for _, v := range envVars {
		assert.False(t, listed[v.name], "%s is listed twice", v.name)
		listed[v.name] = true
		assert.Contains(t, read, v.name, "%s is in the help but no file of canvasd reads it", v.name)
		assert.NotEmpty(t, v.meaning, v.name)
	}
	for name, path := range read {
		assert.True(t, listed[name], "%s (read in %s) is missing from envVars in help.go", name, path)
	}

	var cfg config
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	require.NoError(t, cfg.serveFlags(fs, getenv(nil)))
	var evalCfg evalConfig
	evalFS := flag.NewFlagSet("eval", flag.ContinueOnError)
	evalCfg.evalFlags(evalFS, getenv(nil))
	sets := map[string]*flag.FlagSet{"serve": fs, "eval": evalFS}
	for _, v := range envVars {
		if v.flag == "" {
			continue
		}
		command, name, ok := strings.Cut(v.flag, " ")
		if !ok {
			command, name = "serve", v.flag
		}
		require.Contains(t, sets, command, "%s names the flag %s of a command this test does not know", v.name, v.flag)
		assert.NotNil(t, sets[command].Lookup(strings.TrimPrefix(name, "--")), "%s names the flag %s, which %s lacks",
			v.name, v.flag, command)
	}
}

func TestRun_Version(t *testing.T) {
	t.Parallel()
	t.Run("Command", func(t *testing.T) {
		stdout, _, err := runCmd("version")
		require.NoError(t, err)
		bi, ok := debug.ReadBuildInfo()
		require.True(t, ok)
		assert.Equal(t, versionText(bi), stdout)
		assert.True(t, strings.HasPrefix(stdout, "canvasd "), stdout)
		assert.Contains(t, stdout, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH)
	})
	t.Run("Arguments", func(t *testing.T) {
		_, _, err := runCmd("version", "extra")
		assert.ErrorIs(t, err, errUsage)
	})
	t.Run("VCS", func(t *testing.T) {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8",
			Main: debug.Module{Path: "github.com/promptcanvas/promptcanvas", Version: "v0.0.0-20261125103000-3f1c2a3e4b5c+dirty"},
			Settings: []debug.BuildSetting{
				{Key: "vcs", Value: "git"},
				{Key: "vcs.revision", Value: "3f1c2a3e4b5c6d7e8f90a1b2c3d4e5f60718293a"},
				{Key: "vcs.time", Value: "2026-11-25T10:30:00Z"},
				{Key: "vcs.modified", Value: "true"},
			}}
		assert.Equal(t, "canvasd v0.0.0-20261125103000-3f1c2a3e4b5c+dirty (github.com/promptcanvas/promptcanvas)\n"+
			"commit 3f1c2a3e4b5c6d7e8f90a1b2c3d4e5f60718293a (2026-11-25T10:30:00Z), with uncommitted changes\n"+
			"go1.26.8 "+runtime.GOOS+"/"+runtime.GOARCH+"\n", versionText(bi))
	})
	t.Run("NoVCS", func(t *testing.T) {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/promptcanvas/promptcanvas", Version: "(devel)"}}
		text := versionText(bi)
		assert.NotContains(t, text, "commit")
		assert.True(t, strings.HasPrefix(text, "canvasd (devel) (github.com/promptcanvas/promptcanvas)\n"), text)
	})
}

func TestDataDir(t *testing.T) {
	t.Parallel()
	// Whatever the reason, the message names the directory and the reason,
	// and SQLite never gets to fail with a code of its own.
	serveOn := func(t *testing.T, dir string) error {
		t.Helper()
		_, stderr, err := runCmd("serve", "--addr", "127.0.0.1:0", "--data", dir)
		require.Error(t, err, "stderr: %s", stderr)
		assert.NotContains(t, strings.ToLower(err.Error()), "sqlite")
		return err
	}

	t.Run("ParentIsFile", func(t *testing.T) {
		// Meaningful as root too: no permission bit is involved.
		t.Parallel()
		parent := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(parent, []byte("x"), 0o600))
		dir := filepath.Join(parent, "data")
		err := serveOn(t, dir)
		assert.EqualError(t, err, "data directory "+dir+" cannot be created: "+parent+": not a directory")

		_, _, err = runCmd("keys", "create", "--workspace", "default", "--role", "admin", "--data", dir)
		assert.EqualError(t, err, "data directory "+dir+" cannot be created: "+parent+": not a directory")
	})

	t.Run("IsFile", func(t *testing.T) {
		t.Parallel()
		file := filepath.Join(t.TempDir(), "data")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
		assert.EqualError(t, serveOn(t, file), "data directory "+file+" is a file, not a directory")
	})

	t.Run("ReadOnlyDirectory", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("running as root, which permission bits do not stop: ParentIsFile covers an unwritable directory")
		}
		dir := t.TempDir()
		require.NoError(t, os.Chmod(dir, 0o500))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		assert.EqualError(t, serveOn(t, dir), "data directory "+dir+" cannot be written: permission denied")
	})

	t.Run("ReadOnlyDatabase", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() == 0 {
			t.Skip("running as root, which permission bits do not stop")
		}
		dir := t.TempDir()
		db := filepath.Join(dir, "canvas.db")
		require.NoError(t, os.WriteFile(db, nil, 0o400))
		assert.EqualError(t, serveOn(t, dir), "database "+db+" cannot be written: permission denied")
	})

	t.Run("Writable", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "a", "b")
		db, err := dataDir(dir)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, "canvas.db"), db)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries, "the write check leaves nothing behind")
	})
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"default":         "default",
		"./canvas-data":   "./canvas-data",
		"/tmp/my data":    "'/tmp/my data'",
		"it's":            `'it'\''s'`,
		"":                "''",
		"$HOME/data":      "'$HOME/data'",
		"acme-staging_01": "acme-staging_01",
	} {
		assert.Equal(t, want, shellQuote(in), "shellQuote(%q)", in)
	}
}
