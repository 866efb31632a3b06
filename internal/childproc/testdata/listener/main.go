// Command listener is the child process childproc's tests run: it serves
// HTTP on a loopback port, answering "ok", prints "listening on ADDR" and
// stops on SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	exit := flag.Int("exit", -1, "write a line to standard error and exit with this status before listening")
	silent := flag.Bool("silent", false, "never print the listening line")
	flag.Parse()

	fmt.Println("starting")
	fmt.Fprintln(os.Stderr, "listener: "+os.Getenv("LISTENER_GREETING"))
	if *exit >= 0 {
		fmt.Fprintln(os.Stderr, "listener: exiting early")
		os.Exit(*exit)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "ok")
	})}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if !*silent {
		// A line that only contains the phrase is not the listening line.
		fmt.Println("metrics listening on 127.0.0.1:1")
		fmt.Printf("listening on %s\n", ln.Addr())
	}
	if err := srv.Serve(ln); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
