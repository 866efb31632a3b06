// Command canvasd is the Prompt Canvas reference server: the composition
// root that opens the SQLite store in its data directory, wires the domain
// services into the HTTP server, and manages API keys.
//
//	canvasd [serve] [--addr ADDR] [--data DIR] [--database URL] [--blobs URL] [--base-url URL]
//	canvasd keys create --workspace NAME --role ROLE [--project ID]... [--data DIR]
//	canvasd keys list [--data DIR]
//	canvasd keys revoke KEY_ID [--data DIR]
//	canvasd export --out DIR [--workspace NAME] [--data DIR]
//	canvasd import --in DIR [--workspace NAME] [--dry-run] [--data DIR]
//	canvasd migrate-store --from sqlite:DIR --to postgres://... [--blobs URL]
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
	"syscall"
)

const usage = `Usage:
  canvasd [serve] [--addr ADDR] [--data DIR] [--database URL] [--blobs URL] [--base-url URL]
  canvasd keys create --workspace NAME --role viewer|editor|admin [--project ID]... [--data DIR]
  canvasd keys list [--data DIR]
  canvasd keys revoke KEY_ID [--data DIR]
  canvasd export --out DIR [--workspace NAME] [--data DIR]
  canvasd import --in DIR [--workspace NAME] [--dry-run] [--data DIR]
  canvasd migrate-store --from sqlite:DIR --to postgres://USER:PASSWORD@HOST/DB [--blobs URL]

Every command that opens the store also takes --database URL.

Environment (a flag wins over its variable):
  CANVAS_ADDR                    address to listen on (default 127.0.0.1:8080)
  CANVAS_DATA                    data directory (default ./canvas-data)
  CANVAS_DATABASE                store: sqlite:[DIR] (default, the data directory) or postgres://USER:PASSWORD@HOST/DB
  CANVAS_BLOBS                   uploaded files: s3://BUCKET?region=R[&endpoint=URL] (default: the store's own)
  CANVAS_BASE_URL                public URL of the server (default http://<addr>)
  CANVAS_BOOTSTRAP_API_KEY       first admin API key of a new database (a UUID)
  CANVAS_JWT_SECRET              accept JWTs signed with HS256 and this secret
  CANVAS_JWKS_FILE               accept JWTs signed by the keys of this JWKS file
  CANVAS_ALLOW_PRIVATE_NETWORKS  1 lets webhooks reach loopback and private addresses
  CANVAS_WEBHOOK_MAX_FAILURES    deliveries failing in a row that disable a subscription (default 5)
  CANVAS_WEBHOOK_SECRET_OVERLAP  how long a rotated-out signing secret stays valid (default 24h)
  CANVAS_OPENAI_BASE_URL         OpenAI-compatible model back end
  CANVAS_OPENAI_API_KEY          its API key
  CANVAS_MAX_CONNECTIONS         most client connections open at once (default 768; 0: no bound)
  CANVAS_MIN_BODY_RATE           slowest average pace of a request body, bytes/s (default 1024; 0: off)
  CANVAS_BODY_GRACE              time before a body's pace counts, and longest stall (default 10s)
  CANVAS_RATE_PER_KEY            requests per second of one credential (default 200; 0: no limit)
  CANVAS_RATE_BURST              requests one credential may send at once (default 400)
  CANVAS_FAILED_AUTH_RATE        failed authentications per second per address (default 1; 0: no limit)
  CANVAS_FAILED_AUTH_BURST       failed authentications one address may make at once (default 20)
  CANVAS_MAX_QUEUED_PER_WORKSPACE queued runs of a workspace before new ones are refused (default 10000)
  CANVAS_LOG_LEVEL               debug, info, warn or error (default info)
  CANVAS_LOG_FORMAT              json or text (default json)
  CANVAS_METRICS_ADDR            separate listener serving /metrics (default none)
  CANVAS_METRICS_PUBLIC          1 also serves /metrics on the main listener, to admins
  CANVAS_PPROF_ADDR              separate listener serving /debug/pprof/ (default none)
  OTEL_EXPORTER_OTLP_ENDPOINT    export spans over OTLP/HTTP (default none)
`

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
// server, when ctx is cancelled and the server has shut down.
func run(ctx context.Context, args []string, env func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && !isFlag(args[0]) {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, env, stdout, stderr)
	case "keys":
		return keys(ctx, args, env, stdout, stderr)
	case "export":
		return export(ctx, args, env, stdout, stderr)
	case "import":
		return importCmd(ctx, args, env, stdout, stderr)
	case "migrate-store":
		return migrateStore(ctx, args, env, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "canvasd: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

func isFlag(arg string) bool { return len(arg) > 1 && arg[0] == '-' }

// newFlagSet returns a flag set that reports errors to stderr and returns
// them rather than exiting.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage of %s:\n", name)
		fs.PrintDefaults()
	}
	return fs
}

// parseArgs parses flags that may come before, between or after the
// positional arguments, and returns the positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
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
