package childproc

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestListenWatch_Write(t *testing.T) {
	tests := []struct {
		name   string
		output string
		want   string // "" when no address is sent
	}{
		{"OK", "starting\nlistening on 127.0.0.1:8080\nmore\n", "127.0.0.1:8080"},
		{"CRLF", "listening on [::1]:80\r\n", "[::1]:80"},
		{"FirstLineOnly", "listening on a:1\nlistening on b:2\n", "a:1"},
		{"NotAtLineStart", "metrics listening on 127.0.0.1:9090\n", ""},
		{"Unfinished", "listening on 127.0.0.1:8080", ""},
		{"AfterLongLine", strings.Repeat("x", 3*maxLine) + "\nlistening on c:3\n", "c:3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Whole, and one byte a write: where exec.Cmd splits the
			// output does not matter.
			for _, size := range []int{len(tt.output), 1} {
				w := &listenWatch{addr: make(chan string, 1)}
				for out := tt.output; out != ""; {
					n := min(size, len(out))
					m, err := w.Write([]byte(out[:n]))
					assert.NoError(t, err)
					assert.Equal(t, n, m)
					out = out[n:]
				}
				select {
				case got := <-w.addr:
					assert.Equal(t, tt.want, got, "write size %d", size)
				default:
					assert.Empty(t, tt.want, "write size %d: no address sent", size)
				}
			}
		})
	}
}
