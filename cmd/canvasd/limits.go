package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/promptcanvas/promptcanvas/internal/connlimit"
	"github.com/promptcanvas/promptcanvas/server"
)

// Connection and body defaults of the reference server.
const (
	// defaultMaxConnections stays well under the usual limit of 1024 open
	// files, leaving room for the database and uploaded files.
	defaultMaxConnections = 768
	// defaultMinBodyRate and defaultBodyGrace cut a body that arrives at
	// less than 1 KiB/s on average, after 10 s, or stalls for 10 s.
	defaultMinBodyRate = 1024
	defaultBodyGrace   = 10 * time.Second
)

// limitsConfig is the part of the configuration that bounds what clients
// may take: connections, slow bodies, request rates and queued work.
type limitsConfig struct {
	// MaxConnections bounds the open client connections
	// (--max-connections, CANVAS_MAX_CONNECTIONS); 0 means no bound.
	MaxConnections int
	// MinBodyRate is the slowest average pace, in bytes a second, at which
	// a request body may arrive after BodyGrace (--min-body-rate,
	// CANVAS_MIN_BODY_RATE); 0 turns the check off. BodyGrace is also the
	// longest a body may stall (--body-grace, CANVAS_BODY_GRACE).
	MinBodyRate int64
	BodyGrace   time.Duration
	// Limits are the server's rate limits and queue bounds (--rate-per-key,
	// --rate-burst, --failed-auth-rate, --failed-auth-burst,
	// --max-queued-per-workspace, --max-queue-delay and their CANVAS_
	// variables).
	Limits server.Limits
}

// limitsFlags registers the limits' flags, with their environment
// variables as defaults; a malformed environment value is an error.
func (c *limitsConfig) limitsFlags(fs *flag.FlagSet, env func(string) string) error {
	d := server.DefaultLimits
	ints := []struct {
		name, variable, usage string
		def                   int
		dst                   *int
	}{
		{"max-connections", "CANVAS_MAX_CONNECTIONS", "most client `connections` open at once; 0: no bound",
			defaultMaxConnections, &c.MaxConnections},
		{"rate-burst", "CANVAS_RATE_BURST", "`requests` one credential may send at once",
			d.PerKeyBurst, &c.Limits.PerKeyBurst},
		{"failed-auth-burst", "CANVAS_FAILED_AUTH_BURST", "failed authentications one address may make at once",
			d.FailedAuthBurst, &c.Limits.FailedAuthBurst},
		{"max-queued-per-workspace", "CANVAS_MAX_QUEUED_PER_WORKSPACE",
			"queued `runs` a workspace may have before new ones are refused (429); 0: no bound",
			d.MaxQueuedPerWorkspace, &c.Limits.MaxQueuedPerWorkspace},
	}
	for _, f := range ints {
		v := f.def
		if raw := env(f.variable); raw != "" {
			n, err := strconv.Atoi(raw)
			if err != nil || n < 0 {
				return fmt.Errorf("%s: %q is not a number of zero or more", f.variable, raw)
			}
			v = n
		}
		fs.IntVar(f.dst, f.name, v, fmt.Sprintf("%s (env %s)", f.usage, f.variable))
	}
	rates := []struct {
		name, variable, usage string
		def                   float64
		dst                   *float64
	}{
		{"rate-per-key", "CANVAS_RATE_PER_KEY", "sustained `requests` per second of one credential; 0: no limit",
			d.PerKey, &c.Limits.PerKey},
		{"failed-auth-rate", "CANVAS_FAILED_AUTH_RATE",
			"sustained failed authentications per second from one address; 0: no limit",
			d.FailedAuthPerAddr, &c.Limits.FailedAuthPerAddr},
	}
	for _, f := range rates {
		v := f.def
		if raw := env(f.variable); raw != "" {
			n, err := strconv.ParseFloat(raw, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("%s: %q is not a rate of zero or more", f.variable, raw)
			}
			v = n
		}
		fs.Float64Var(f.dst, f.name, v, fmt.Sprintf("%s (env %s)", f.usage, f.variable))
	}
	delay := d.MaxQueueDelay
	if raw := env("CANVAS_MAX_QUEUE_DELAY"); raw != "" {
		v, err := time.ParseDuration(raw)
		if err != nil || v < 0 {
			return fmt.Errorf("CANVAS_MAX_QUEUE_DELAY: %q is not a duration of zero or more", raw)
		}
		delay = v
	}
	fs.DurationVar(&c.Limits.MaxQueueDelay, "max-queue-delay", delay,
		"longest new model work may be predicted to wait to start, or four recent model jobs' time when longer, before it is refused (429); 0: no bound (env CANVAS_MAX_QUEUE_DELAY)")
	rate, grace := int64(defaultMinBodyRate), defaultBodyGrace
	if raw := env("CANVAS_MIN_BODY_RATE"); raw != "" {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("CANVAS_MIN_BODY_RATE: %q is not a number of bytes a second", raw)
		}
		rate = n
	}
	if raw := env("CANVAS_BODY_GRACE"); raw != "" {
		g, err := time.ParseDuration(raw)
		if err != nil || g <= 0 {
			return fmt.Errorf("CANVAS_BODY_GRACE: %q is not a positive duration", raw)
		}
		grace = g
	}
	fs.Int64Var(&c.MinBodyRate, "min-body-rate", rate,
		"slowest average pace of a request body in `bytes` a second; 0: no check (env CANVAS_MIN_BODY_RATE)")
	fs.DurationVar(&c.BodyGrace, "body-grace", grace,
		"time a request body may take before its pace counts, and may stall (env CANVAS_BODY_GRACE)")
	return nil
}

// guard applies the connection and body limits to the server srv is about
// to serve on ln, and returns the listener to serve on.
func (c limitsConfig) guard(srv *http.Server, ln net.Listener) net.Listener {
	if c.BodyGrace > 0 {
		srv.Handler = server.MinBodyRate(srv.Handler, c.MinBodyRate, c.BodyGrace)
	}
	if c.MaxConnections > 0 {
		return connlimit.New(ln, c.MaxConnections)
	}
	return ln
}
