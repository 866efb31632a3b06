package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
)

// command is one subcommand of canvasd. A name of two words is a command of
// a group ("keys create" is in the group "keys").
type command struct {
	// name is what follows canvasd on the command line.
	name string
	// args is the rest of its usage line.
	args string
	// summary says what it does, in one line.
	summary string
	// run runs it with the arguments that follow its name.
	run func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

// commands are canvasd's subcommands, in the order the help lists them.
// run dispatches through this table, and the usage text is made from it,
// so a command added here is both reachable and documented. "help" is
// handled by run itself. The table is filled by init: the commands' flag
// sets print their usage from it, which a variable's initializer could not
// refer to.
var commands []command

func init() {
	commands = []command{
		{"serve", "[--addr ADDR] [--data DIR] [--database URL] [--blobs URL] [--base-url URL] [flags]",
			"run the server (the default command; see 'canvasd serve --help' for every flag)", serve},
		{"keys create", "--workspace NAME --role viewer|editor|admin [--name NAME] [--project ID]... [--data DIR] [--database URL]",
			"create an API key and print it once", keysCreate},
		{"keys list", "[--workspace NAME] [--data DIR] [--database URL]", "list API keys (never the keys themselves)", keysList},
		{"keys revoke", "KEY_ID [--data DIR] [--database URL]", "revoke an API key", keysRevoke},
		{"export", "--out DIR [--workspace NAME] [--data DIR] [--database URL]",
			"write a workspace's canvases to one JSON file each", export},
		{"import", "--in DIR [--workspace NAME] [--dry-run] [--data DIR] [--database URL]",
			"apply files written by export, idempotently", importCmd},
		{"backup", "--to DIR [--data DIR] [--blobs URL] [--secrets-key-file FILE]",
			"copy a SQLite data directory, served or not, with its files and key file, to a new directory", backup},
		{"restore", "--from DIR --data NEW_DIR", "verify a backup and restore it into a new or empty data directory", restore},
		{"eval", "--canvas ID --candidate VERSION|ENV [--baseline VERSION|ENV] --evaluator SPEC... [--min-pass-rate R] [--max-regressions N] [--junit FILE] [--summary FILE] [flags]",
			"run a canvas's test cases on a running server and fail when the candidate misses a gate (CI)", evalCmd},
		{"secrets create-key", "--out FILE", "create a key file for --secrets-key-file (mode 0600)", secretsCreateKey},
		{"secrets rotate-key", "[--secrets-key-file FILE] [--data DIR] [--database URL]",
			"re-seal every credential and webhook evaluator secret under a new key, then drop the older keys from the key file", secretsRotateKey},
		{"audit verify", "[--workspace ID] [--expect-head WORKSPACE_ID=HASH]... [--data DIR] [--database URL]",
			"check every workspace's audit hash chain, print each head, and fail naming every break", auditVerify},
		{"audit export", "[--workspace ID] [--since RFC3339] [--out FILE] [--data DIR] [--database URL]",
			"write the audit log as NDJSON, one event a line, for a SIEM", auditExport},
		{"migrate-store", "--from sqlite:DIR --to postgres://USER:PASSWORD@HOST/DB [--blobs URL]",
			"copy a SQLite deployment into an empty Postgres database, files included", migrateStore},
		{"healthcheck", "[--addr ADDR]", "ask the server on ADDR for /healthz; exit 0 when it answers 200", healthcheck},
		{"version", "", "print the version of canvasd and how it was built", versionCmd},
		{"help", "", "print this help", nil},
	}
}

// envVar is an environment variable canvasd reads: its flag, when it has
// one ("--addr" of serve, or "eval --url" of another command), and what it
// sets.
type envVar struct {
	name, flag, meaning string
}

// envVars is every environment variable canvasd reads, in the order the
// help lists them. A test checks that every variable the code names is
// here.
var envVars = []envVar{
	{"CANVAS_ADDR", "--addr", "address to listen on (default 127.0.0.1:8080)"},
	{"CANVAS_DATA", "--data", "data directory (default ./canvas-data)"},
	{"CANVAS_DATABASE", "--database", "store: sqlite:[DIR] (default, the data directory) or postgres://USER:PASSWORD@HOST/DB"},
	{"CANVAS_BLOBS", "--blobs", "uploaded files: s3://BUCKET?region=R[&endpoint=URL] (default: the store's own)"},
	{"CANVAS_BASE_URL", "--base-url", "public URL of the server (default http://<addr>)"},
	{"CANVAS_SECRETS_KEY_FILE", "--secrets-key-file", "key file sealing credentials (default <data>/secrets.key with SQLite; required with Postgres)"},
	{"CANVAS_BOOTSTRAP_API_KEY", "", "first admin API key of a new database, a UUID (default random); ignored for an existing database"},
	{"CANVAS_JWT_SECRET", "", "accept JWTs signed with HS256 and this secret"},
	{"CANVAS_JWKS_FILE", "", "accept JWTs signed by the keys of this JWKS file"},
	{"CANVAS_ALLOW_PRIVATE_NETWORKS", "", "1 lets webhooks and public file URLs reach loopback and private addresses"},
	{"CANVAS_OPENAI_BASE_URL", "", "OpenAI-compatible model back end"},
	{"CANVAS_OPENAI_API_KEY", "", "its API key"},
	{"CANVAS_UPLOAD_URL_LIFETIME", "--upload-url-lifetime", "how long a file upload URL works (default 15m)"},
	{"CANVAS_MAX_FILE_SIZE", "--max-file-size", "largest file upload in bytes (default 32 MiB)"},
	{"CANVAS_WEBHOOK_MAX_FAILURES", "", "deliveries failing in a row that disable a subscription (default 5)"},
	{"CANVAS_WEBHOOK_SECRET_OVERLAP", "", "how long a rotated-out signing secret stays valid (default 24h)"},
	{"CANVAS_WORKER_CONCURRENCY", "--worker-concurrency", "model jobs run at once (default 16)"},
	{"CANVAS_DELIVERY_CONCURRENCY", "--delivery-concurrency", "webhook delivery jobs run at once (default 16)"},
	{"CANVAS_JOB_RETENTION", "--job-retention", "how long a finished job is kept (default 7d; 0: forever)"},
	{"CANVAS_DELIVERY_RETENTION", "--delivery-retention", "how long an ended webhook delivery is kept (default 30d)"},
	{"CANVAS_RUN_RETENTION", "--run-retention", "how long an ended completion or task run is kept (default 30d)"},
	{"CANVAS_WORKFLOW_RUN_RETENTION", "--workflow-run-retention", "how long an ended workflow run is kept (default 30d)"},
	{"CANVAS_AUDIT_RETENTION", "--audit-retention", "how long an audit event is kept (default 0: forever)"},
	{"CANVAS_PURGE_INTERVAL", "--purge-interval", "time between two purges of ended records (default 1h)"},
	{"CANVAS_MAX_CONNECTIONS", "--max-connections", "most client connections open at once (default 768; 0: no bound)"},
	{"CANVAS_MIN_BODY_RATE", "--min-body-rate", "slowest average pace of a request body, bytes/s (default 1024; 0: off)"},
	{"CANVAS_BODY_GRACE", "--body-grace", "time before a body's pace counts, and longest stall (default 10s)"},
	{"CANVAS_RATE_PER_KEY", "--rate-per-key", "requests per second of one credential (default 200; 0: no limit)"},
	{"CANVAS_RATE_BURST", "--rate-burst", "requests one credential may send at once (default 400)"},
	{"CANVAS_FAILED_AUTH_RATE", "--failed-auth-rate", "failed authentications per second per address (default 1; 0: no limit)"},
	{"CANVAS_FAILED_AUTH_BURST", "--failed-auth-burst", "failed authentications one address may make at once (default 20)"},
	{"CANVAS_MAX_QUEUED_PER_WORKSPACE", "--max-queued-per-workspace", "queued runs of a workspace before new ones are refused (default 10000)"},
	{"CANVAS_MAX_QUEUE_DELAY", "--max-queue-delay", "refuse new model work with 429 while work queued now would wait longer than this, or than four recent model jobs took, to start (default 100ms; 0: off)"},
	{"CANVAS_LOG_LEVEL", "--log-level", "debug, info, warn or error (default info)"},
	{"CANVAS_LOG_FORMAT", "--log-format", "json or text (default json)"},
	{"CANVAS_METRICS_ADDR", "--metrics-addr", "separate listener serving /metrics (default none)"},
	{"CANVAS_METRICS_PUBLIC", "--metrics-public", "1 also serves /metrics on the main listener, to admins"},
	{"CANVAS_PPROF_ADDR", "--pprof", "separate listener serving /debug/pprof/ (default none)"},
	{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "--otlp-endpoint", "export spans over OTLP/HTTP to this URL (default none)"},
	{"OTEL_EXPORTER_OTLP_ENDPOINT", "--otlp-endpoint", "the same, when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is unset"},
	{"CANVAS_URL", "eval --url", "server canvasd eval calls, such as https://canvas.example.com"},
	{"CANVAS_KEY", "eval --key", "API key (or JWT) canvasd eval sends"},
}

// usage returns the help: every command, then every environment variable.
func usage() string {
	var b strings.Builder
	b.WriteString("canvasd is the Prompt Canvas server.\n\nUsage:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  canvasd %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	b.WriteString("\nRun 'canvasd COMMAND --help' for a command's arguments and flags.\n")
	b.WriteString("\nEnvironment (a flag wins over its variable):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, v := range envVars {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.name, v.flag, v.meaning)
	}
	tw.Flush()
	return b.String()
}

// groupUsage returns the usage lines of the commands of a group, such as
// "keys", and whether there is such a group.
func groupUsage(group string) (string, bool) {
	var b strings.Builder
	for _, c := range commands {
		if g, _, ok := strings.Cut(c.name, " "); ok && g == group {
			fmt.Fprintf(&b, "  %s\n", commandLine(c))
		}
	}
	if b.Len() == 0 {
		return "", false
	}
	return "Usage:\n" + b.String(), true
}

// lookupCommand returns the command with that name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandLine returns a command's usage line.
func commandLine(c command) string {
	return strings.TrimSpace("canvasd " + c.name + " " + c.args)
}

// commandUsage returns the usage of the command with that name: its usage
// line and summary.
func commandUsage(name string) string {
	c, ok := lookupCommand(name)
	if !ok {
		return "Usage:\n  canvasd " + name + "\n"
	}
	return "Usage:\n  " + commandLine(c) + "\n\n" + c.summary + "\n"
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help":
		return true
	}
	return false
}

// versionCmd prints the version of the binary and how it was built.
func versionCmd(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("canvasd version", stderr)
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return errors.New("this binary carries no build information")
	}
	fmt.Fprint(stdout, versionText(bi))
	return nil
}

// versionText describes a build: the main module's version and path, the
// commit it was built from when the build recorded one, and the Go
// toolchain and platform.
//
//	canvasd v0.0.0-20261125103000-3f1c2a3e4b5c+dirty (github.com/promptcanvas/promptcanvas)
//	commit 3f1c2a3e4b5c... (2026-11-25T10:30:00Z), with uncommitted changes
//	go1.26.8 linux/amd64
func versionText(bi *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	version := bi.Main.Version
	if version == "" {
		version = "(unknown)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "canvasd %s (%s)\n", version, bi.Main.Path)
	if rev := settings["vcs.revision"]; rev != "" {
		fmt.Fprintf(&b, "commit %s", rev)
		if t := settings["vcs.time"]; t != "" {
			fmt.Fprintf(&b, " (%s)", t)
		}
		if settings["vcs.modified"] == "true" {
			b.WriteString(", with uncommitted changes")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s %s/%s\n", bi.GoVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}
