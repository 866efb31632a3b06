package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheckTimeout bounds one health check.
const healthcheckTimeout = 5 * time.Second

// healthcheck asks the server listening on --addr for GET /healthz and
// succeeds when it answers 200: the container image's HEALTHCHECK, which
// has no shell or curl to call. An unspecified host (0.0.0.0, ::, none) is
// asked on loopback.
func healthcheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var addr string
	fs := newFlagSet("canvasd healthcheck", stderr)
	fs.StringVar(&addr, "addr", envOr(getenv, "CANVAS_ADDR", defaultAddr), "`address` the server listens on (env CANVAS_ADDR)")
	if err := noPositional(fs, args, stderr); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	url := "http://" + net.JoinHostPort(host, port) + "/healthz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health check: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health check: %s answered %d: %s", url, resp.StatusCode, body)
	}
	fmt.Fprintf(stdout, "%s: ok\n", url)
	return nil
}
