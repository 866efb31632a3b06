package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/engine"
	"github.com/promptcanvas/promptcanvas/server"
)

// Server timeouts. WriteTimeout is left at zero so that streamed responses
// may last; handlers that need a deadline set their own.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 5 * time.Minute
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 1 << 20
	// shutdownTimeout bounds how long in-flight requests may run once
	// shutdown has begun; what is still open then is closed.
	shutdownTimeout = 30 * time.Second
)

// serve runs the reference server until ctx is cancelled, then stops
// accepting connections, lets in-flight requests finish (at most
// shutdownTimeout), and closes the store.
//
// Everything that can fail at start-up (the data directory, the listeners,
// the store, the handler) is done before a new database is bootstrapped:
// the default workspace and its admin API key are created only once the
// server is about to serve, and the key is printed right away, before the
// "listening on" line. A start that fails earlier leaves no workspace, so
// the next start bootstraps. A start on an existing database prints how to
// create an admin key instead, and warns when no admin key is left.
func serve(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var cfg config
	fs := newFlagSet("canvasd serve", stderr)
	if err := cfg.serveFlags(fs, getenv); err != nil {
		return err
	}
	if pos, err := parseArgs(fs, args); err != nil {
		return err
	} else if len(pos) > 0 {
		fmt.Fprintf(stderr, "canvasd serve: unexpected argument %q\n", pos[0])
		return errUsage
	}
	db, err := cfg.database()
	if err != nil {
		return err
	}
	if db.Kind == kindPostgres && cfg.SecretsKeyFile == "" {
		return errPostgresNeedsKeyFile
	}
	if cfg.BaseURL != "" {
		if err := checkBaseURL(cfg.BaseURL); err != nil {
			return err
		}
	}
	logger := newLogger(cfg.observabilityConfig, stderr)
	authOpts, err := authOptions(cfg, logger)
	if err != nil {
		return err
	}
	if db.Kind == kindSQLite {
		if _, err := dataDir(db.Dir); err != nil {
			return err
		}
	}

	// The listeners come before the store: upload URLs carry the bound
	// address when no base URL is configured, and an address in use fails
	// the start before the database is touched. Serve closes them; the
	// deferred Close covers the returns before that.
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	addr := ln.Addr().String()
	if cfg.BaseURL == "" {
		cfg.BaseURL = "http://" + addr
	}
	sides := []*sideListener{{name: "metrics", addr: cfg.MetricsAddr}, {name: "pprof", addr: cfg.PprofAddr}}
	for _, side := range sides {
		if err := side.listen(ctx); err != nil {
			return err
		}
		defer side.stop()
	}

	opts, err := engineOptions(cfg, logger)
	if err != nil {
		return err
	}
	tp, shutdownTracing, err := tracerProvider(ctx, cfg.sideConfig)
	if err != nil {
		return err
	}
	defer func() {
		if err := shutdownTracing(context.WithoutCancel(ctx)); err != nil {
			logger.Warn("flush spans", slog.Any("error", err))
		}
	}()
	opts.TracerProvider, opts.Metrics = tp, metricsRegistry()
	eng, closeFn, err := cfg.openEngine(ctx, opts, true, true)
	if err != nil {
		return err
	}
	closeEngine := sync.OnceValue(closeFn)
	defer closeEngine()

	// Watch streams and long polls end when the shutdown starts, rather
	// than hold it for shutdownTimeout.
	watchStop := make(chan struct{})
	authOpts.Store, authOpts.Changes = eng.Store, eng.Changes
	handler, err := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(authOpts), Logger: logger,
		Limits: cfg.Limits, PublicMetrics: cfg.MetricsPublic, Watch: server.WatchOptions{Stop: watchStop}})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(func() { close(watchStop) })
	guarded := cfg.guard(srv, ln)

	// The start-up text (the address, the console, the first key and the
	// next step) is printed as one block once the server serves, after the
	// log lines of the start.
	var startup bytes.Buffer
	if err := bootstrap(ctx, eng, cfg, logger, &startup); err != nil {
		return err
	}

	// The engine's background work stops, finishing or giving back the
	// jobs it holds, before the store closes, whichever way serve returns
	// (Engine.Close waits for Run).
	engineDone := make(chan error, 1)
	go func() { engineDone <- eng.Run(context.WithoutCancel(ctx)) }()
	defer func() {
		if err := closeEngine(); err != nil {
			logger.Warn("close the engine", slog.Any("error", err))
		}
		if err := <-engineDone; err != nil {
			logger.Warn("background work stopped", slog.Any("error", err))
		}
	}()
	sides[0].serve(server.MetricsHandler(eng.Metrics), logger, stdout)
	sides[1].serve(pprofHandler(), logger, stdout)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(guarded) }()
	console := consoleURL(cfg.BaseURL)
	logger.Info("listening", slog.String("addr", addr), slog.String("baseUrl", cfg.BaseURL),
		slog.String("console", console), slog.String("database", db.String()),
		slog.Bool("jwt", cfg.JWTSecret != "" || cfg.JWKSFile != ""))
	fmt.Fprintf(stdout, "listening on %s\nconsole: %s\n%s", addr, console, startup.Bytes())

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case err := <-engineDone:
		engineDone <- err // for the deferred wait
		return fmt.Errorf("background work stopped: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		logger.Warn("in-flight requests outlived the shutdown timeout; closing them", slog.Any("error", err))
		srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("server stopped", slog.Any("error", err))
	}
	if err := closeEngine(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// consoleURL is the address of the operator console under the server's
// public URL.
func consoleURL(baseURL string) string {
	return strings.TrimSuffix(baseURL, "/") + "/console"
}

// bootstrap makes a new database usable and says so: it creates the
// default workspace and its admin API key, and prints the key once on
// standard output (never in the log: logs are shipped and kept, and a
// credential does not belong in them). On an existing database it prints
// the command that creates an admin key, for whoever never saw the key of
// the first start; warns when no workspace has an active admin key any
// more; and reports a CANVAS_BOOTSTRAP_API_KEY as ignored.
func bootstrap(ctx context.Context, eng *engine.Engine, cfg config, logger *slog.Logger, stdout io.Writer) error {
	created, token, err := eng.Bootstrap(ctx, cfg.BootstrapAPIKey)
	if err != nil {
		return err
	}
	if created {
		logger.Info("new database: created the default workspace and its admin API key (printed on standard output)",
			slog.String("workspace", canvas.DefaultWorkspaceName))
		fmt.Fprintf(stdout, "admin API key: %s\n", token)
		fmt.Fprintf(stdout, "next: export CANVAS_KEY=%s\n", token)
		fmt.Fprintf(stdout, "      then open %s and sign in with the key; the API takes it as \"Authorization: Bearer $CANVAS_KEY\"\n",
			consoleURL(cfg.BaseURL))
		return nil
	}

	if cfg.BootstrapAPIKey != "" {
		state := "it is not a key of this database"
		if key, err := eng.Store.GetAPIKeyByHash(ctx, canvas.HashToken(cfg.BootstrapAPIKey)); err == nil {
			state = "it is a key of this database"
			if key.RevokedAt != nil {
				state = "it is a revoked key of this database"
			}
		} else if canvas.ErrorCode(err) != canvas.ENOTFOUND {
			return fmt.Errorf("look up the bootstrap API key: %w", err)
		}
		logger.Warn("CANVAS_BOOTSTRAP_API_KEY is ignored: the database already exists, and only a new one is "+
			"given a first admin key; "+state, slog.String("data", cfg.Data))
	}

	workspaces, err := eng.Store.ListWorkspaces(ctx)
	if err != nil {
		return fmt.Errorf("list workspaces: %w", err)
	}
	// The bootstrap workspace when it exists, else the oldest.
	workspace := canvas.DefaultWorkspaceName
	if !slices.ContainsFunc(workspaces, func(w *canvas.Workspace) bool { return w.Name == workspace }) &&
		len(workspaces) > 0 {
		workspace = workspaces[0].Name
	}
	keys, err := eng.Store.ListAPIKeys(ctx, "")
	if err != nil {
		return fmt.Errorf("list API keys: %w", err)
	}
	create := adminKeyCommand(cfg, workspace)
	if !slices.ContainsFunc(keys, func(k *canvas.APIKey) bool { return k.Role == canvas.RoleAdmin && k.RevokedAt == nil }) {
		logger.Warn("no active admin API key in the database; create one with: "+create, slog.String("data", cfg.Data))
		fmt.Fprintf(stdout, "no admin API key: create one with: %s\n", create)
		fmt.Fprintf(stdout, "  or, from a source checkout: %s\n", fromSource(create))
		return nil
	}
	fmt.Fprintf(stdout, "existing database; to create an admin API key: %s\n", create)
	fmt.Fprintf(stdout, "  or, from a source checkout: %s\n", fromSource(create))
	return nil
}

// fromSource is a canvasd command line as it runs from a checkout of the
// source, where canvasd is not installed: go run ./cmd/canvasd ...
func fromSource(cmd string) string {
	return "go run ./cmd/" + cmd
}

// adminKeyCommand is the command line that creates an admin API key in
// workspace of the database the server opened.
func adminKeyCommand(cfg config, workspace string) string {
	cmd := "canvasd keys create --workspace " + shellQuote(workspace) + " --role admin"
	if db, err := cfg.database(); err == nil && db.Kind == kindPostgres {
		// The connection string holds a password: the command names the
		// flag, whose value the operator has at hand.
		return cmd + " --database \"$CANVAS_DATABASE\""
	}
	if filepath.Clean(cfg.Data) != filepath.Clean(defaultData) {
		cmd += " --data " + shellQuote(cfg.Data)
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// authOptions turns the JWT configuration into the authenticator's
// options: an HS256 secret, a JWKS file, or both.
func authOptions(cfg config, logger *slog.Logger) (server.AuthOptions, error) {
	opts := server.AuthOptions{Logger: logger}
	if cfg.JWTSecret != "" {
		opts.JWTSecrets = [][]byte{[]byte(cfg.JWTSecret)}
	}
	if cfg.JWKSFile != "" {
		set, err := server.LoadJWKSFile(cfg.JWKSFile)
		if err != nil {
			return opts, fmt.Errorf("CANVAS_JWKS_FILE: %w", err)
		}
		opts.JWKS = set
	}
	return opts, nil
}

// checkBaseURL requires an absolute http or https URL.
func checkBaseURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q is not an absolute http or https URL", raw)
	}
	return nil
}
