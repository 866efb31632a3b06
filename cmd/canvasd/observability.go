package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
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
	return nil
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
