package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/promptcanvas/promptcanvas/internal/netguard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPublic(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.1.2.3", "::1", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1",
		"fc00::1", "fd12:3456::1", "169.254.169.254", "fe80::1", "0.0.0.0", "::", "224.0.0.1",
		"ff02::1", "100.64.0.1", "100.127.255.254", "255.255.255.255", "::ffff:127.0.0.1",
		"::ffff:10.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "198.18.0.1",
	}
	for _, s := range refused {
		assert.False(t, netguard.Public(netip.MustParseAddr(s)), s)
	}
	allowed := []string{"8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"}
	for _, s := range allowed {
		assert.True(t, netguard.Public(netip.MustParseAddr(s)), s)
	}
}

func TestControl(t *testing.T) {
	assert.ErrorIs(t, netguard.Control("tcp", "127.0.0.1:80", nil), netguard.ErrBlocked)
	assert.ErrorIs(t, netguard.Control("tcp", "[::1]:80", nil), netguard.ErrBlocked)
	assert.ErrorIs(t, netguard.Control("tcp", "localhost:80", nil), netguard.ErrBlocked, "only resolved addresses pass")
	assert.NoError(t, netguard.Control("tcp", "8.8.8.8:443", nil))
}

func TestClient(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/target", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(srv.Close)
	_, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	get := func(c *http.Client, url string) (int, error) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	t.Run("Forbidden", func(t *testing.T) {
		for _, u := range []string{srv.URL, "http://localhost:" + port} {
			_, err := get(netguard.Client(false, 0), u)
			assert.True(t, errors.Is(err, netguard.ErrBlocked), "%s: %v", u, err)
		}
	})
	t.Run("AllowPrivate", func(t *testing.T) {
		status, err := get(netguard.Client(true, 0), srv.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusTeapot, status)
	})
	t.Run("RedirectNotFollowed", func(t *testing.T) {
		status, err := get(netguard.Client(true, 0), srv.URL+"/redirect")
		require.NoError(t, err)
		assert.Equal(t, http.StatusFound, status)
	})
}

func TestCheckURL(t *testing.T) {
	for _, ok := range []string{"http://example.com/x", "https://example.com:8443/hook?a=1", "https://user:pw@example.com"} {
		_, err := netguard.CheckURL(ok)
		assert.NoError(t, err, ok)
	}
	for _, bad := range []string{"ftp://example.com", "gopher://x", "example.com/x", "https://", "http://%zz", "javascript:alert(1)"} {
		_, err := netguard.CheckURL(bad)
		assert.Error(t, err, bad)
	}
}
