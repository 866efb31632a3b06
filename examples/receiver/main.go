// Command receiver is a webhook receiver to try notifications with: it
// listens on a loopback address, prints every POST it is sent (path,
// headers and the JSON body, indented), answers 204, and with -n stops
// after that many. A GET answers 200 and is not printed, so that a script
// can wait until the receiver listens.
//
//	go run ./examples/receiver -addr 127.0.0.1:9000 -n 1
//
// canvasd refuses to deliver to loopback and private addresses unless it
// runs with CANVAS_ALLOW_PRIVATE_NETWORKS=1. Deliveries of an application's
// subscription are signed (webhook-signature): docs/webhooks.md says how to
// verify them; this receiver only shows what arrives.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"
)

// maxBody bounds the body a request may send.
const maxBody = 1 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:9000", "`address` to listen on")
	n := flag.Int("n", 0, "stop after this many POST requests (0: run until interrupted)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if err := run(ctx, ln, *n, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run serves on ln, writing each POST to w, until ctx ends or n POSTs
// (n > 0) have been answered.
func run(ctx context.Context, ln net.Listener, n int, w io.Writer) error {
	var (
		mu       sync.Mutex
		received int
	)
	done := make(chan struct{})
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			fmt.Fprintln(rw, "ready")
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			http.Error(rw, "body too large or unreadable", http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if n > 0 && received == n {
			http.Error(rw, "done", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, describe(r, body))
		rw.WriteHeader(http.StatusNoContent)
		if received++; received == n {
			close(done)
		}
	})}
	fmt.Fprintf(w, "receiver listening on http://%s\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	case <-done:
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// describe returns a request as the receiver prints it: the request line,
// the headers sorted by name (lower case, as HTTP/2 would send them), and
// the body, indented when it is JSON.
func describe(r *http.Request, body []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL.RequestURI())
	names := make([]string, 0, len(r.Header))
	for name := range r.Header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range r.Header[name] {
			fmt.Fprintf(&b, "%s: %s\n", strings.ToLower(name), v)
		}
	}
	var indented bytes.Buffer
	if json.Indent(&indented, body, "", "  ") == nil {
		body = indented.Bytes()
	}
	b.Write(body)
	b.WriteString("\n\n")
	return b.String()
}
