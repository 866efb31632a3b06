package main

import (
	"flag"
	"fmt"
	"strconv"
)

// Defaults of the reference server.
const (
	defaultAddr = "127.0.0.1:8080"
	defaultData = "./canvas-data"
)

// config is everything canvasd reads from its flags and environment. A flag
// given on the command line wins over its environment variable, which wins
// over the default.
type config struct {
	// Addr is where the server listens (--addr, CANVAS_ADDR).
	Addr string
	// Data is the data directory, holding canvas.db (--data, CANVAS_DATA).
	Data string
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
}

// serveFlags registers the flags of the server and reads the settings that
// only the environment carries.
func (c *config) serveFlags(fs *flag.FlagSet, env func(string) string) error {
	c.dataFlag(fs, env)
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
	return c.fileFlags(fs, env)
}
