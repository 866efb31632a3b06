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
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/promptcanvas/promptcanvas/queue"
	"github.com/promptcanvas/promptcanvas/retention"
	"github.com/promptcanvas/promptcanvas/server"
	"github.com/promptcanvas/promptcanvas/store/sqlite"
	"github.com/promptcanvas/promptcanvas/testcase"
	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/webhook"
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
	if cfg.BaseURL != "" {
		if err := checkBaseURL(cfg.BaseURL); err != nil {
			return err
		}
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	authOpts, err := authOptions(cfg, logger)
	if err != nil {
		return err
	}

	dbPath, err := dataDir(cfg.Data)
	if err != nil {
		return err
	}
	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		return fmt.Errorf("open %s: %w", dbPath, err)
	}
	closeDB := sync.OnceValue(db.Close)
	defer closeDB()

	created, token, err := canvas.Bootstrap(ctx, db, cfg.BootstrapAPIKey)
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

	fileSvc, err := files(cfg, db)
	if err != nil {
		return err
	}
	// The notifier wakes the worker, which is built with the completion
	// service that needs the notifier: it is bound before any request.
	var worker *queue.Worker
	notifier := webhook.NewNotifier(webhook.NotifierOptions{Store: db, Notify: func() { worker.Notify() }})
	envs := env.NewService(db, db, env.WithPublishOutbox(publicationOutbox(notifier), func() { worker.Notify() }))
	llm := &models{}
	workflowSvc := workflows(db, llm, fileSvc, notifier, func() *queue.Worker { return worker }, logger)
	completionSvc, worker, err := completions(cfg, db, envs, fileSvc, notifier, workflowSvc, logger)
	if err != nil {
		return err
	}
	llm.svc = completionSvc
	handleWorkflows(worker, workflowSvc)
	worker.Handle(webhook.JobKindFanout, notifier.HandleFanout)
	worker.Handle(webhook.JobKindCanvasEvent, notifier.HandleCanvasEvent)
	worker.Handle(vault.JobKindExpire, fileSvc.HandleExpireJob)
	if err := schedulePurges(ctx, cfg, db, worker, logger); err != nil {
		return err
	}
	testCaseSvc := testcase.NewService(testcase.Options{Store: db, Canvases: db, Generations: db})
	generationSvc := generations(testCaseSvc, db, completionSvc, worker, generationOutbox(notifier))
	handler, err := server.New(server.Options{
		Store:        db,
		Canvases:     canvas.NewService(db, canvas.WithWorkflows(workflowSvc), canvas.WithPromoter(envs)),
		Workflows:    workflowSvc,
		Environments: envs,
		Completions:  completionSvc,
		TestCases:    testCaseSvc,
		Generations:  generationSvc,
		Files:        fileSvc,
		Applications: applications(cfg, db),
		Deliveries:   deliveryService(cfg, db),
		Auth:         server.NewAuthenticator(db, authOpts...),
		Logger:       logger,
		Limits:       cfg.Limits,
	})
	if err != nil {
		return err
	}
	// The worker finishes or releases the jobs it holds before the store
	// closes, whichever way serve returns.
	workerCtx, cancelWorker := context.WithCancel(context.WithoutCancel(ctx))
	workerDone := make(chan error, 1)
	go func() { workerDone <- worker.Run(workerCtx) }()
	stopWorker := sync.OnceFunc(func() {
		cancelWorker()
		if err := <-workerDone; err != nil {
			logger.Warn("queue worker stopped", slog.Any("error", err))
		}
	})
	defer stopWorker()

	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	guarded := cfg.guard(srv, ln)
	go func() { served <- srv.Serve(guarded) }()
	logger.Info("listening", slog.String("addr", addr), slog.String("baseUrl", cfg.BaseURL),
		slog.String("data", cfg.Data), slog.Bool("jwt", cfg.JWTSecret != "" || cfg.JWKSFile != ""))
	fmt.Fprintf(stdout, "listening on %s\n", addr)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
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
	stopWorker()
	if err := closeDB(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	logger.Info("stopped")
	return nil
}

// schedulePurges registers the purge of ended records on the worker and
// makes sure one purge job is queued; restarts and other processes on the
// same data queue no second one.
func schedulePurges(ctx context.Context, cfg config, db retention.Store, worker *queue.Worker, logger *slog.Logger) error {
	p := retention.New(retention.Options{Store: db, Jobs: cfg.JobRetention, Deliveries: cfg.DeliveryRetention,
		Runs: cfg.RunRetention, WorkflowRuns: cfg.WorkflowRunRetention, Interval: cfg.PurgeInterval, Logger: logger})
	worker.Handle(retention.JobKind, p.Handle)
	if _, err := p.Schedule(ctx); err != nil {
		return fmt.Errorf("schedule the purge of ended records: %w", err)
	}
	return nil
}

// authOptions turns the JWT configuration into authenticator options: an
// HS256 secret, a JWKS file, or both.
func authOptions(cfg config, logger *slog.Logger) ([]server.AuthOption, error) {
	opts := []server.AuthOption{server.WithAuthLogger(logger)}
	if cfg.JWTSecret != "" {
		opts = append(opts, server.WithJWTSecret([]byte(cfg.JWTSecret)))
	}
	if cfg.JWKSFile != "" {
		set, err := server.LoadJWKSFile(cfg.JWKSFile)
		if err != nil {
			return nil, fmt.Errorf("CANVAS_JWKS_FILE: %w", err)
		}
		opts = append(opts, server.WithJWKS(set))
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
