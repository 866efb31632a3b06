package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/retention"
)

// Defaults of the reference server.
const (
	defaultAddr = "127.0.0.1:8080"
	defaultData = "./canvas-data"
	// defaultRunRetention and defaultWorkflowRunRetention keep ended
	// completion, task and workflow runs for 30 days, as long as the
	// webhook deliveries that report them: long enough to look into an
	// incident, not so long that run records fill the disk.
	defaultRunRetention         = 30 * 24 * time.Hour
	defaultWorkflowRunRetention = 30 * 24 * time.Hour
)

// config is everything canvasd reads from its flags and environment. A flag
// given on the command line wins over its environment variable, which wins
// over the default.
type config struct {
	// Addr is where the server listens (--addr, CANVAS_ADDR).
	Addr string
	// Data is the data directory, holding canvas.db (--data, CANVAS_DATA).
	Data string
	// databaseConfig selects the store and the blob storage (database.go).
	databaseConfig
	// secretsConfig names the key file that seals credentials (secrets.go).
	secretsConfig
	// BaseURL is the public address of the server, used in upload URLs
	// (--base-url, CANVAS_BASE_URL); empty means http://<bound address>.
	BaseURL string
	// BootstrapAPIKey is the first admin key of a new database, a UUID
	// (CANVAS_BOOTSTRAP_API_KEY); empty means a random one.
	BootstrapAPIKey string
	// JWTSecret enables JWTs signed with HS256 and this secret
	// (CANVAS_JWT_SECRET).
	JWTSecret string
	// JWKSFile enables JWTs signed by the RSA or EC keys of this JSON Web
	// Key Set file, each key with its own pinned algorithm
	// (CANVAS_JWKS_FILE).
	JWKSFile string
	// AllowPrivateNetworks lets webhooks and public file URLs reach loopback
	// and private addresses (CANVAS_ALLOW_PRIVATE_NETWORKS=1).
	AllowPrivateNetworks bool
	// OpenAIBaseURL and OpenAIAPIKey configure an OpenAI-compatible model
	// back end (CANVAS_OPENAI_BASE_URL, CANVAS_OPENAI_API_KEY).
	OpenAIBaseURL string
	OpenAIAPIKey  string
	// fileConfig holds the vault's settings (files.go).
	fileConfig
	// deliveryConfig holds the webhook delivery settings (deliveries.go).
	deliveryConfig
	// applicationConfig holds the application settings (applications.go).
	applicationConfig
	// retentionConfig holds how long ended records are kept.
	retentionConfig
	// workerConfig holds the queue worker's settings (completions.go).
	workerConfig
	// limitsConfig holds the connection, body, rate and queue limits
	// (limits.go).
	limitsConfig
	// observabilityConfig holds logs, metrics, traces and profiles
	// (observability.go).
	observabilityConfig
}

// retentionConfig holds the retention of each kind of ended record; zero
// keeps it forever.
type retentionConfig struct {
	// JobRetention is how long a finished queue job is kept
	// (--job-retention, CANVAS_JOB_RETENTION, default 7d).
	JobRetention time.Duration
	// DeliveryRetention is how long an ended webhook delivery log row and
	// its attempts are kept (--delivery-retention,
	// CANVAS_DELIVERY_RETENTION, default 30d).
	DeliveryRetention time.Duration
	// RunRetention is how long an ended completion or task run is kept
	// (--run-retention, CANVAS_RUN_RETENTION, default 30d).
	RunRetention time.Duration
	// WorkflowRunRetention is how long an ended workflow run and its steps
	// are kept (--workflow-run-retention, CANVAS_WORKFLOW_RUN_RETENTION,
	// default 30d).
	WorkflowRunRetention time.Duration
	// AuditRetention is how long an audit event is kept
	// (--audit-retention, CANVAS_AUDIT_RETENTION, default 0: forever);
	// the purge keeps each workspace's chain an unbroken tail.
	AuditRetention time.Duration
	// PurgeInterval is the time between two purges (--purge-interval,
	// CANVAS_PURGE_INTERVAL, default 1h).
	PurgeInterval time.Duration
}

// retentionFlags registers the retention flags, with their environment
// variables as defaults; a malformed environment value is an error.
func (c *retentionConfig) retentionFlags(fs *flag.FlagSet, env func(string) string) error {
	for _, f := range []struct {
		name, variable, usage string
		def                   time.Duration
		positive              bool
		dst                   *time.Duration
	}{
		{"job-retention", "CANVAS_JOB_RETENTION", "how long a finished job is kept",
			retention.DefaultJobs, false, &c.JobRetention},
		{"delivery-retention", "CANVAS_DELIVERY_RETENTION", "how long an ended webhook delivery is kept",
			retention.DefaultDeliveries, false, &c.DeliveryRetention},
		{"run-retention", "CANVAS_RUN_RETENTION", "how long an ended completion or task run is kept",
			defaultRunRetention, false, &c.RunRetention},
		{"workflow-run-retention", "CANVAS_WORKFLOW_RUN_RETENTION", "how long an ended workflow run is kept",
			defaultWorkflowRunRetention, false, &c.WorkflowRunRetention},
		{"audit-retention", "CANVAS_AUDIT_RETENTION", "how long an audit event is kept",
			0, false, &c.AuditRetention},
		{"purge-interval", "CANVAS_PURGE_INTERVAL", "time between two purges of ended records",
			retention.DefaultInterval, true, &c.PurgeInterval},
	} {
		v := (*days)(f.dst)
		*v = days(f.def)
		if raw := env(f.variable); raw != "" {
			if err := v.set(raw, f.positive); err != nil {
				return fmt.Errorf("%s: %w", f.variable, err)
			}
		}
		usage := f.usage + ", a `duration` such as 12h or 7d"
		if !f.positive {
			usage += "; 0 keeps it forever"
		}
		fs.Func(f.name, fmt.Sprintf("%s (env %s, default %s)", usage, f.variable, v),
			func(raw string) error { return v.set(raw, f.positive) })
	}
	return nil
}

// days is a duration that may also be written as a whole number of days,
// such as 7d, and is printed that way when it is one.
type days time.Duration

// set parses raw into d: a Go duration or a number of days; a negative
// duration, or zero when positive is set, is an error.
func (d *days) set(raw string, positive bool) error {
	var v time.Duration
	if n, ok := strings.CutSuffix(raw, "d"); ok {
		i, err := strconv.Atoi(n)
		if err != nil || i < 0 || i > 100*365 {
			return fmt.Errorf("%q is not a number of days", raw)
		}
		v = time.Duration(i) * 24 * time.Hour
	} else {
		var err error
		if v, err = time.ParseDuration(raw); err != nil {
			return fmt.Errorf("%q is not a duration", raw)
		}
	}
	if v < 0 {
		return fmt.Errorf("%q is negative", raw)
	}
	if positive && v == 0 {
		return fmt.Errorf("%q is not a positive duration", raw)
	}
	*d = days(v)
	return nil
}

func (d days) String() string {
	if d == 0 {
		return "0"
	}
	if v := time.Duration(d); v%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(v/(24*time.Hour)), 10) + "d"
	}
	return time.Duration(d).String()
}

// envOr returns the environment variable name, or def when it is unset or
// empty.
func envOr(env func(string) string, name, def string) string {
	if v := env(name); v != "" {
		return v
	}
	return def
}

// dataFlag registers --data, which every subcommand takes.
func (c *config) dataFlag(fs *flag.FlagSet, env func(string) string) {
	fs.StringVar(&c.Data, "data", envOr(env, "CANVAS_DATA", defaultData),
		"data `directory` holding canvas.db (env CANVAS_DATA)")
	c.databaseFlag(fs, env)
}

// serveFlags registers the flags of the server and reads the settings that
// only the environment carries.
func (c *config) serveFlags(fs *flag.FlagSet, env func(string) string) error {
	c.dataFlag(fs, env)
	c.blobsFlag(fs, env)
	c.secretsFlag(fs, env)
	fs.StringVar(&c.Addr, "addr", envOr(env, "CANVAS_ADDR", defaultAddr),
		"`address` to listen on (env CANVAS_ADDR)")
	fs.StringVar(&c.BaseURL, "base-url", env("CANVAS_BASE_URL"),
		"public `URL` of the server, used in upload URLs; default http://<addr> (env CANVAS_BASE_URL)")
	c.BootstrapAPIKey = env("CANVAS_BOOTSTRAP_API_KEY")
	c.JWTSecret = env("CANVAS_JWT_SECRET")
	c.JWKSFile = env("CANVAS_JWKS_FILE")
	c.OpenAIBaseURL = env("CANVAS_OPENAI_BASE_URL")
	c.OpenAIAPIKey = env("CANVAS_OPENAI_API_KEY")
	if v := env("CANVAS_ALLOW_PRIVATE_NETWORKS"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("CANVAS_ALLOW_PRIVATE_NETWORKS: %q is not a boolean", v)
		}
		c.AllowPrivateNetworks = b
	}
	if err := c.deliveryFlags(env); err != nil {
		return err
	}
	if err := c.applicationFlags(env); err != nil {
		return err
	}
	if err := c.retentionFlags(fs, env); err != nil {
		return err
	}
	if err := c.workerFlags(fs, env); err != nil {
		return err
	}
	if err := c.limitsFlags(fs, env); err != nil {
		return err
	}
	if err := c.observabilityFlags(fs, env); err != nil {
		return err
	}
	return c.fileFlags(fs, env)
}
