package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// observabilityConfig holds what canvasd tells the operator about itself:
// logs, metrics, traces and profiles.
type observabilityConfig struct {
	// LogLevel is the lowest level logged (--log-level, CANVAS_LOG_LEVEL:
	// debug, info, warn or error; default info). Each request is logged at
	// debug; failures of the server at error.
	LogLevel slog.Level
	// LogFormat is json or text (--log-format, CANVAS_LOG_FORMAT; default
	// json).
	LogFormat string
	// sideConfig holds metrics, traces and profiles.
	sideConfig
}

// observabilityFlags registers the flags of logs, metrics, traces and
// profiles, with their environment variables as defaults; a malformed
// environment value is an error.
func (c *observabilityConfig) observabilityFlags(fs *flag.FlagSet, env func(string) string) error {
	c.LogLevel = slog.LevelInfo
	if v := env("CANVAS_LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("CANVAS_LOG_LEVEL: %q is not one of debug, info, warn, error", v)
		}
	}
	fs.Func("log-level", "lowest `level` logged: debug, info, warn or error (env CANVAS_LOG_LEVEL, default info)",
		func(v string) error {
			if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("%q is not one of debug, info, warn, error", v)
			}
			return nil
		})
	c.LogFormat = strings.ToLower(envOr(env, "CANVAS_LOG_FORMAT", "json"))
	if err := checkLogFormat(c.LogFormat); err != nil {
		return fmt.Errorf("CANVAS_LOG_FORMAT: %w", err)
	}
	fs.Func("log-format", "log `format`: json or text (env CANVAS_LOG_FORMAT, default json)", func(v string) error {
		v = strings.ToLower(v)
		if err := checkLogFormat(v); err != nil {
			return err
		}
		c.LogFormat = v
		return nil
	})
	return c.sideFlags(fs, env)
}

// checkLogFormat accepts json and text.
func checkLogFormat(v string) error {
	if v != "json" && v != "text" {
		return fmt.Errorf("%q is not json or text", v)
	}
	return nil
}

// newLogger returns the logger of the configuration, writing to w.
func newLogger(c observabilityConfig, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// sideConfig holds the operator's listeners and the trace exporter.
type sideConfig struct {
	// MetricsAddr, when set, serves /metrics on a listener of its own
	// (--metrics-addr, CANVAS_METRICS_ADDR).
	MetricsAddr string
	// MetricsPublic also serves /metrics on the main listener, to admins
	// (--metrics-public, CANVAS_METRICS_PUBLIC=1).
	MetricsPublic bool
	// OTLPEndpoint, when set, exports spans over OTLP/HTTP to this URL
	// (--otlp-endpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT).
	OTLPEndpoint string
	// PprofAddr, when set, serves net/http/pprof on a listener of its own
	// (--pprof, CANVAS_PPROF_ADDR).
	PprofAddr string
}

// sideFlags registers the flags of sideConfig.
func (c *sideConfig) sideFlags(fs *flag.FlagSet, env func(string) string) error {
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("CANVAS_METRICS_ADDR"),
		"`address` of a separate listener serving /metrics (env CANVAS_METRICS_ADDR; default none)")
	if v := env("CANVAS_METRICS_PUBLIC"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("CANVAS_METRICS_PUBLIC: %q is not a boolean", v)
		}
		c.MetricsPublic = b
	}
	fs.BoolVar(&c.MetricsPublic, "metrics-public", c.MetricsPublic,
		"also serve /metrics on the main listener, to admin keys only (env CANVAS_METRICS_PUBLIC)")
	endpoint := envOr(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", env("OTEL_EXPORTER_OTLP_ENDPOINT"))
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", endpoint,
		"`URL` of an OTLP/HTTP collector to export spans to (env OTEL_EXPORTER_OTLP_ENDPOINT; default none)")
	fs.StringVar(&c.PprofAddr, "pprof", env("CANVAS_PPROF_ADDR"),
		"`address` of a separate listener serving /debug/pprof/ (env CANVAS_PPROF_ADDR; default none)")
	return nil
}

// tracerProvider returns the TracerProvider of the configuration and its
// shutdown: an OTLP/HTTP exporter when an endpoint is configured, nil (no
// spans, nothing global) otherwise.
func tracerProvider(ctx context.Context, c sideConfig) (trace.TracerProvider, func(context.Context) error, error) {
	if c.OTLPEndpoint == "" {
		return nil, func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(c.OTLPEndpoint))
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP endpoint: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "canvasd"))))
	return tp, tp.Shutdown, nil
}

// metricsRegistry returns the registry canvasd's metrics go on: the
// engine's and server's, plus the Go runtime's and the process's.
func metricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// pprofHandler serves net/http/pprof on a mux of its own, never
// http.DefaultServeMux.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// sideListener is an operator's endpoint (metrics, pprof) on a listener of
// its own: bound by listen at start-up, served once the handler exists, and
// closed by stop. An empty addr turns it off.
type sideListener struct {
	name, addr string
	ln         net.Listener
	srv        *http.Server
	done       chan struct{}
}

// listen binds the listener, so that an address in use fails the start
// before anything else is done.
func (s *sideListener) listen(ctx context.Context) error {
	if s.addr == "" {
		return nil
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.addr)
	if err != nil {
		return fmt.Errorf("%s listener: %w", s.name, err)
	}
	s.ln = ln
	return nil
}

// serve serves h on the bound listener until stop is called, and prints
// "<name> listening on ADDR" to stdout.
func (s *sideListener) serve(h http.Handler, logger *slog.Logger, stdout io.Writer) {
	if s.ln == nil {
		return
	}
	s.srv = &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, IdleTimeout: idleTimeout,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
			logger.Warn(s.name+" listener stopped", slog.Any("error", err))
		}
	}()
	logger.Info(s.name+" listening", slog.String("addr", s.ln.Addr().String()))
	fmt.Fprintf(stdout, "%s listening on %s\n", s.name, s.ln.Addr())
}

// stop closes the listener and, when it was served, waits for its server
// to return.
func (s *sideListener) stop() {
	switch {
	case s.srv != nil:
		_ = s.srv.Close()
		<-s.done
	case s.ln != nil:
		_ = s.ln.Close()
	}
}
