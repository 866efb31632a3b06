package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"github.com/promptcanvas/promptcanvas/credential"
	"github.com/promptcanvas/promptcanvas/engine"
)

// secretsConfig names the key file that seals credentials.
type secretsConfig struct {
	// SecretsKeyFile is the key file (--secrets-key-file,
	// CANVAS_SECRETS_KEY_FILE): empty means <data>/secrets.key with
	// SQLite, created on first start; Postgres requires one, the same file
	// on every replica.
	SecretsKeyFile string
}

// secretsFlag registers --secrets-key-file.
func (c *secretsConfig) secretsFlag(fs *flag.FlagSet, env func(string) string) {
	fs.StringVar(&c.SecretsKeyFile, "secrets-key-file", env("CANVAS_SECRETS_KEY_FILE"),
		"key `file` sealing credentials' keys; default <data>/secrets.key with SQLite (created on first start), "+
			"required with Postgres, shared by every replica (env CANVAS_SECRETS_KEY_FILE)")
}

// errPostgresNeedsKeyFile is the error of a server on Postgres started
// without a key file: each replica would otherwise seal with a key of its
// own.
var errPostgresNeedsKeyFile = errors.New("a Postgres store needs --secrets-key-file (or CANVAS_SECRETS_KEY_FILE): " +
	"the key file that seals credentials, the same file on every replica; make one with " +
	"'canvasd secrets create-key --out FILE'")

// keyFile returns the key file of db: the one configured, else the data
// directory's for SQLite, else "".
func (c *config) keyFile(db database) string {
	if c.SecretsKeyFile != "" || db.Kind != kindSQLite {
		return c.SecretsKeyFile
	}
	return filepath.Join(db.Dir, engine.SecretsKeyFile)
}

// secretsCreateKey writes a new key file holding one key, mode 0600; an
// existing file is never overwritten.
func secretsCreateKey(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var out string
	fs := newFlagSet("canvasd secrets create-key", stderr)
	fs.StringVar(&out, "out", "", "`file` to create (mode 0600)")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	if out == "" {
		fmt.Fprint(stderr, "canvasd secrets create-key: --out is required\n\n"+commandUsage("secrets create-key"))
		return errUsage
	}
	ring, err := credential.CreateKeyFile(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s with key %s; give it to every server with --secrets-key-file\n", out, ring.Current())
	return nil
}

// secretsRotateKey re-seals every credential and every webhook evaluator's
// secret under a new key: it puts a new key first in the key file (the
// older ones stay, so that running servers keep opening what they sealed),
// re-seals every credential of every workspace under it, then the secrets
// of saved evaluators and experiments (those stored in clear by an earlier
// release too), and then removes the older keys from the file.
// If the re-sealing stops, the file keeps every key and running the
// command again finishes the work.
func secretsRotateKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("canvasd secrets rotate-key", stderr)
	cfg.dataFlag(fs, getenv)
	cfg.secretsFlag(fs, getenv)
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	db, err := cfg.database()
	if err != nil {
		return err
	}
	path := cfg.keyFile(db)
	if path == "" {
		return errPostgresNeedsKeyFile
	}
	if db.Kind == kindSQLite {
		if err := sqliteExists(db.Dir); err != nil {
			return err
		}
	}
	ring, err := credential.LoadKeyFile(path)
	if err != nil {
		return err
	}
	old := ring.Keys()
	next := credential.NewKey()
	if err := credential.WriteKeyFile(path, append([]credential.Key{next}, old...)); err != nil {
		return err
	}
	ring, err = credential.LoadKeyFile(path)
	if err != nil {
		return err
	}
	eng, closeEngine, err := cfg.openEngine(ctx, engine.Options{Secrets: ring}, false, false)
	if err != nil {
		return err
	}
	n, err := eng.Credentials.RotateKey(ctx)
	m := 0
	if err == nil {
		m, err = eng.Experiments.ResealSecrets(ctx)
	}
	if cerr := closeEngine(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("re-sealed %d credentials and the webhook secrets of %d evaluators and experiments "+
			"under key %s, then: %w (%s keeps every key: run the command again)", n, m, next.ID, err, path)
	}
	if err := credential.WriteKeyFile(path, []credential.Key{next}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "re-sealed %d credentials and the webhook secrets of %d evaluators and experiments "+
		"under key %s; %s holds that key alone\n", n, m, next.ID, path)
	return nil
}
