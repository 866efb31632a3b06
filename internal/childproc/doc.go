// Package childproc runs a server program as a child process, the way the
// load program (cmd/canvas-bench) and canvasd's own tests run canvasd.
//
// It owns the child's life: Build compiles a main package into a
// directory once; Start runs the binary with its arguments and extra
// environment, keeps the tail of its standard error, and waits (bounded by
// a timeout and the context) for the line "listening on ADDR" on its
// standard output, which gives the address it serves on; Stop, Kill and
// Wait end it and report how it ended. The functions return errors, so
// that a program and a test helper can each wrap them in their own way.
package childproc
