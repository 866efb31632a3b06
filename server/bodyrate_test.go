package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/promptcanvas/promptcanvas/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countBody answers 200 with the number of body bytes it read, or 400 when
// the body could not be read to its end.
func countBody(w http.ResponseWriter, r *http.Request) {
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, "could not read the request body", http.StatusBadRequest)
		return
	}
	fmt.Fprint(w, n)
}

// newRateServer serves countBody behind MinBodyRate(minRate, grace) with
// the reference server's long read timeout, which the body deadline
// replaces.
func newRateServer(t *testing.T, minRate int64, grace time.Duration) *httptest.Server {
	srv := httptest.NewUnstartedServer(server.MinBodyRate(http.HandlerFunc(countBody), minRate, grace))
	srv.Config.ReadTimeout = 5 * time.Minute
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestMinBodyRate(t *testing.T) {
	t.Parallel()

	t.Run("TrickleCutOff", func(t *testing.T) {
		t.Parallel()
		srv := newRateServer(t, 1000, 300*time.Millisecond)
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		const size = 600 // 60 s at the pace below
		_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n", size)
		require.NoError(t, err)
		var sent atomic.Int64
		go func() {
			for range size {
				if _, err := conn.Write([]byte{'x'}); err != nil {
					return
				}
				sent.Add(1)
				time.Sleep(100 * time.Millisecond)
			}
		}()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(30*time.Second))) // a broken limit fails, not hangs
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, "the server answers the slow body")
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Less(t, sent.Load(), int64(size), "it was cut off before the client had sent it all")
		_, err = io.Copy(io.Discard, resp.Body)
		require.NoError(t, err)
		_, err = conn.Read(make([]byte, 1))
		assert.ErrorIs(t, err, io.EOF, "and the server closed the connection")
	})

	t.Run("LargeBodyAtNormalPace", func(t *testing.T) {
		t.Parallel()
		srv := newRateServer(t, 1000, time.Second)
		const size = 64 << 20
		resp, err := http.Post(srv.URL, "application/octet-stream", io.LimitReader(zeros{}, size))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		assert.Equal(t, strconv.Itoa(size), string(body), "every byte arrived")
	})

	t.Run("LongerThanGrace", func(t *testing.T) {
		t.Parallel()
		srv := newRateServer(t, 1000, time.Second)
		const chunks, chunk = 60, 64 << 10
		pr, pw := io.Pipe()
		go func() {
			for range chunks {
				if _, err := pw.Write(make([]byte, chunk)); err != nil {
					return
				}
				time.Sleep(25 * time.Millisecond) // about 1.5 s in all, at 2.5 MB/s
			}
			pw.Close()
		}()
		resp, err := http.Post(srv.URL, "application/octet-stream", pr)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
		assert.Equal(t, strconv.Itoa(chunks*chunk), string(body), "a body may take longer than grace while it keeps coming")
	})

	t.Run("KeepAliveAfterBody", func(t *testing.T) {
		t.Parallel()
		srv := newRateServer(t, 1000, 300*time.Millisecond)
		client := srv.Client()
		for i := range 3 {
			resp, err := client.Post(srv.URL, "text/plain", bytes.NewReader([]byte("hello")))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "request %d", i)
			assert.Equal(t, "5", string(body))
			time.Sleep(400 * time.Millisecond) // idle longer than grace: the cleared deadline does not cut the next request
		}
	})

}

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
