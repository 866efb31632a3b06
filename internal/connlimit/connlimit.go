// Package connlimit bounds how many connections a server holds open at
// once, so that slow or idle clients cannot use up its file descriptors.
package connlimit

import (
	"net"
	"sync"
)

// Listener is a net.Listener that holds at most a fixed number of accepted
// connections open: while that many are open, Accept waits for one of them
// to close, and new connections wait in the kernel's backlog.
type Listener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// New returns ln bounded to max open connections; max must be positive.
func New(ln net.Listener, max int) *Listener {
	return &Listener{Listener: ln, slots: make(chan struct{}, max), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection. A connection frees
// its slot when it is closed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &conn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

// Close closes the listener; an Accept waiting for a slot returns
// net.ErrClosed.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// conn frees its listener's slot once when closed.
type conn struct {
	net.Conn
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
