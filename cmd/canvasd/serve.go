package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
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
// shutdownTimeout), and closes the store. On a new database it creates the
// default workspace and prints its admin API key once.
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

	// The listener comes first: upload URLs carry the bound address when
	// no base URL is configured. Serve closes it; the deferred Close covers
	// the returns before that.
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
	eng, closeFn, err := cfg.openEngine(ctx, opts, true)
	if err != nil {
		return err
	}
	closeEngine := sync.OnceValue(closeFn)
	defer closeEngine()

	created, token, err := eng.Bootstrap(ctx, cfg.BootstrapAPIKey)
	if err != nil {
		return err
	}
	if created {
		// The key goes to standard output only: logs are shipped and kept,
		// and a credential does not belong in them.
		logger.Info("new database: created the default workspace and its admin API key (printed on standard output)",
			slog.String("workspace", canvas.DefaultWorkspaceName))
		fmt.Fprintf(stdout, "admin API key: %s\n", token)
	}

	// Watch streams and long polls end when the shutdown starts, rather
	// than hold it for shutdownTimeout.
	watchStop := make(chan struct{})
	authOpts.Store, authOpts.Changes = eng.Store, eng.Changes
	handler, err := server.New(server.Options{Engine: eng, Auth: server.NewAuthenticator(authOpts), Logger: logger,
		Limits: cfg.Limits, PublicMetrics: cfg.MetricsPublic, Watch: server.WatchOptions{Stop: watchStop}})
	if err != nil {
		return err
	}
	for _, side := range []struct {
		name, addr string
		h          http.Handler
	}{
		{"metrics", cfg.MetricsAddr, server.MetricsHandler(eng.Metrics)},
		{"pprof", cfg.PprofAddr, pprofHandler()},
	} {
		if side.addr == "" {
			continue
		}
		stop, err := sideListener(ctx, side.name, side.addr, side.h, logger, stdout)
		if err != nil {
			return err
		}
		defer stop()
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

	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(func() { close(watchStop) })
	served := make(chan error, 1)
	guarded := cfg.guard(srv, ln)
	go func() { served <- srv.Serve(guarded) }()
	logger.Info("listening", slog.String("addr", addr), slog.String("baseUrl", cfg.BaseURL),
		slog.String("database", db.String()), slog.Bool("jwt", cfg.JWTSecret != "" || cfg.JWKSFile != ""))
	fmt.Fprintf(stdout, "listening on %s\n", addr)

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
