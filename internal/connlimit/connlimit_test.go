package connlimit_test

import (
	"net"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/internal/connlimit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := connlimit.New(inner, 2)
	t.Cleanup(func() { ln.Close() })

	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(100 * time.Millisecond):
	}

	require.NoError(t, first.Close())
	_ = first.Close() // closing twice frees one slot only
	third := <-accepted
	require.NotNil(t, third, "a closed connection frees its slot for the waiting one")
	second.Close()
	third.Close()

	require.NoError(t, ln.Close())
	_, open := <-accepted
	assert.False(t, open, "Accept returns once the listener is closed")
}

func TestListener_CloseWhileFull(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ln := connlimit.New(inner, 1)
	c, err := net.Dial("tcp", inner.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	held, err := ln.Accept()
	require.NoError(t, err)
	defer held.Close()

	done := make(chan error, 1)
	go func() {
		_, err := ln.Accept()
		done <- err
	}()
	require.NoError(t, ln.Close())
	assert.ErrorIs(t, <-done, net.ErrClosed, "an Accept waiting for a slot ends with the listener")
}
