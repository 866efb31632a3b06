// Command canvasd is the Prompt Canvas reference server: the composition
// root that opens the SQLite store in its data directory, wires the domain
// services into the HTTP server, and manages API keys.
//
//	canvasd [serve] [--addr ADDR] [--data DIR] [--database URL] [--blobs URL] [--base-url URL] [--secrets-key-file FILE]
//	canvasd keys create --workspace NAME --role ROLE [--project ID]... [--data DIR]
//	canvasd keys list [--data DIR]
//	canvasd keys revoke KEY_ID [--data DIR]
//	canvasd export --out DIR [--workspace NAME] [--data DIR]
//	canvasd import --in DIR [--workspace NAME] [--dry-run] [--data DIR]
//	canvasd backup --to DIR [--data DIR] [--blobs URL] [--secrets-key-file FILE]
//	canvasd restore --from DIR --data NEW_DIR
//	canvasd eval --url URL --key KEY --canvas ID --candidate VERSION|ENV [--baseline VERSION|ENV] --evaluator SPEC... [--min-pass-rate R] [--max-regressions N] [--junit FILE] [--summary FILE]
//	canvasd secrets create-key --out FILE
//	canvasd secrets rotate-key [--secrets-key-file FILE] [--data DIR] [--database URL]
//	canvasd audit verify [--workspace ID] [--expect-head WORKSPACE_ID=HASH]... [--data DIR] [--database URL]
//	canvasd audit export [--workspace ID] [--since RFC3339] [--out FILE] [--data DIR] [--database URL]
//	canvasd migrate-store --from sqlite:DIR --to postgres://... [--blobs URL]
//	canvasd healthcheck [--addr ADDR]
//	canvasd version
//	canvasd help
//
// Every command that opens the store takes --database: SQLite in the data
// directory by default, or Postgres, which several replicas share.
//
// A flag wins over its environment variable. JWT authentication is
// configured by CANVAS_JWT_SECRET (HS256) and CANVAS_JWKS_FILE (a JSON Web
// Key Set of RSA and EC public keys); without either, only API keys
// authenticate.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/promptcanvas/promptcanvas/engine"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// A second signal kills the process at once.
	go func() { <-ctx.Done(); stop() }()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "canvasd:", err)
		os.Exit(1)
	}
}

// errUsage reports a command line that could not be understood; the
// problem has already been written to stderr.
var errUsage = errors.New("usage")

// run is canvasd: it reads its command line args (without the program
// name) and its environment through env, writes its output to stdout and
// its logs to stderr, and returns when the command is done or, for the
// server, when ctx is cancelled and the server has shut down. Without a
// command it serves.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0:
		return serve(ctx, args, env, stdout, stderr)
	case isHelp(args[0]) || args[0] == "help":
		fmt.Fprint(stdout, usage())
		return nil
	case isFlag(args[0]):
		return serve(ctx, args, env, stdout, stderr)
	}
	name, args := args[0], args[1:]
	if group, ok := groupUsage(name); ok {
		switch {
		case len(args) == 0:
			fmt.Fprintf(stderr, "canvasd %s: missing command\n\n%s", name, group)
			return errUsage
		case isHelp(args[0]):
			fmt.Fprint(stdout, group)
			return nil
		}
		name, args = name+" "+args[0], args[1:]
	}
	c, ok := lookupCommand(name)
	if !ok || c.run == nil {
		fmt.Fprintf(stderr, "canvasd: unknown command %q\n\n%s", name, usage())
		return errUsage
	}
	return c.run(ctx, args, env, stdout, stderr)
}

func isFlag(arg string) bool { return len(arg) > 1 && arg[0] == '-' }

// newFlagSet returns the flag set of the command name ("canvasd keys
// create"), which returns its errors rather than exiting. parseArgs
// reports them: --help prints the command's usage line and summary, then
// its flags; a wrong flag one line that points to --help.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), commandUsage(strings.TrimPrefix(name, "canvasd ")))
		fmt.Fprint(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, and returns the positional arguments. --help
// prints the command's usage (flag.ErrHelp); a wrong flag prints one line,
// the error and where the usage is (errUsage).
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	out := fs.Output()
	defer fs.SetOutput(out)
	var pos []string
	for {
		fs.SetOutput(io.Discard)
		if err := fs.Parse(args); err != nil {
			fs.SetOutput(out)
			if errors.Is(err, flag.ErrHelp) {
				fs.Usage()
				return nil, err
			}
			fmt.Fprintf(out, "%s: %v (see %s --help)\n", fs.Name(), err, fs.Name())
			return nil, errUsage
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// dataDir creates the data directory, readable by its owner only, checks
// that canvasd can write there, and returns the path of the database in it.
// A directory that cannot be created or written is an error naming it and
// saying why, before SQLite could fail with a code of its own.
func dataDir(dir string) (string, error) {
	db := filepath.Join(dir, engine.DatabaseFile)
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return "", fmt.Errorf("data directory %s is a file, not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("data directory %s cannot be created: %s", dir, pathReason(err, dir))
	}
	probe, err := os.CreateTemp(dir, ".canvasd-write-check-*")
	if err != nil {
		return "", fmt.Errorf("data directory %s cannot be written: %s", dir, pathReason(err, dir))
	}
	probe.Close()
	if err := os.Remove(probe.Name()); err != nil {
		return "", fmt.Errorf("data directory %s: %s", dir, pathReason(err, dir))
	}
	if f, err := os.OpenFile(db, os.O_RDWR, 0); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("database %s cannot be written: %s", db, pathReason(err, db))
	}
	return db, nil
}

// pathReason is the reason a file operation failed, naming the path it
// failed on when that is not the one the message already names (a parent
// directory, or a file inside it).
func pathReason(err error, named string) string {
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return err.Error()
	}
	if filepath.Clean(pe.Path) == filepath.Clean(named) || filepath.Dir(pe.Path) == filepath.Clean(named) {
		return pe.Err.Error()
	}
	return pe.Path + ": " + pe.Err.Error()
}
