package clienttest

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/client"
	"github.com/stretchr/testify/require"
)

// cutter is a TCP proxy in front of a server whose open connections a test
// can cut, as a flaky network or a load balancer would.
type cutter struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	// hang makes new connections go nowhere: accepted, never answered.
	hang bool
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c := &cutter{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go c.serve()
	return c
}

func (c *cutter) URL() string { return "http://" + c.ln.Addr().String() }

func (c *cutter) serve() {
	for {
		in, err := c.ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		hang := c.hang
		if hang {
			c.conns = append(c.conns, in)
		}
		c.mu.Unlock()
		if hang {
			continue
		}
		out, err := net.Dial("tcp", c.target)
		if err != nil {
			in.Close()
			continue
		}
		c.mu.Lock()
		c.conns = append(c.conns, in, out)
		c.mu.Unlock()
		go func() { _, _ = io.Copy(out, in); out.Close() }()
		go func() { _, _ = io.Copy(in, out); in.Close() }()
	}
}

// cut closes every connection open now.
func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, conn := range c.conns {
		conn.Close()
	}
	c.conns = nil
}

func TestPrompts_DroppedWatch(t *testing.T) {
	ts := startServer(t)
	admin := ts.Client(t)
	f := mustFixture(t, admin, 3)
	f.publish(t, admin, "production", 1)
	proxy := newCutter(t, ts.addr)
	c, err := client.New(proxy.URL(), client.Options{Token: ts.token})
	require.NoError(t, err)
	p := mustPrompts(t, c, client.PromptsOptions{})
	_, err = p.Get(context.Background(), f.Canvas.ID, "production")
	require.NoError(t, err)

	for i := 2; i <= 3; i++ {
		proxy.cut() // the watch drops; the server stays up
		f.publish(t, admin, "production", i)
		eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[i-1].ID, false),
			"a publish made while the watch was down is seen")
	}
}

func TestPrompts_ServerHangs(t *testing.T) {
	ts := startServer(t)
	admin := ts.Client(t)
	f := mustFixture(t, admin, 2)
	f.publish(t, admin, "production", 1)
	proxy := newCutter(t, ts.addr)
	c, err := client.New(proxy.URL(), client.Options{Token: ts.token, MaxRetries: -1})
	require.NoError(t, err)
	p := mustPrompts(t, c, client.PromptsOptions{RequestTimeout: 100 * time.Millisecond, WatchIdle: 300 * time.Millisecond})
	_, err = p.Get(context.Background(), f.Canvas.ID, "production")
	require.NoError(t, err)

	proxy.mu.Lock()
	proxy.hang = true
	proxy.mu.Unlock()
	proxy.cut()
	eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[0].ID, true),
		"a server that accepts connections but never answers makes the prompt stale")

	proxy.mu.Lock()
	proxy.hang = false
	proxy.mu.Unlock()
	f.publish(t, admin, "production", 2)
	eventually(t, p, f.Canvas.ID, "production", servesVersion(f.Versions[1].ID, false), "fresh once it answers again")
}
