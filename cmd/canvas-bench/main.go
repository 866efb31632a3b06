// Command canvas-bench measures canvasd from outside, as its users run it:
// it starts the canvasd binary as a separate process on a fresh data
// directory (or targets a running one with --url), starts its own bare
// net/http baseline as a second process (itself, run as "canvas-bench
// baseline") serving byte for byte what canvasd answers, and its own
// webhook receiver, then runs each scenario for a fixed time, canvasd and
// its baseline interleaved, and prints throughput, latency percentiles,
// canvasd's CPU time per request and resident memory, and the ratio to the
// baseline measured in the same run.
//
// Usage:
//
//	go run ./cmd/canvas-bench [flags]
//	go run ./cmd/canvas-bench --markdown > report.md
//
// The scenarios: GET /environment/version at 8 and 32 clients against the
// bare server; POST /v2/chat/completions (sync, echo model) at 8 clients
// against the bare server and against the one-commit-per-op ceiling of the
// disk (a server doing one durable SQLite commit per request, with the
// settings canvasd uses, on the same directory's disk); POST
// /environment/publish with 8 publishers against the same ceiling; async
// completions with a webhook_url offered at fixed rates (open loop),
// counting what is accepted, refused (429) and delivered; and the same with
// a receiver failing 30 % of the attempts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "canvas-bench:", err)
		}
		os.Exit(1)
	}
}

// run dispatches to the baseline server or the load program.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "baseline" {
		return runBaseline(ctx, args[1:], stdout, stderr)
	}
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	rep, err := bench(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	return rep.write(cfg, stdout)
}
