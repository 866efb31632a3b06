package vault_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

func TestResolveCompatibilityDate(t *testing.T) {
	for _, tc := range []struct{ header, want string }{
		{"2025-01-01", "2025-01-01"},
		{"2025-06-30", "2025-01-01"},
		{"2031-12-31", "2025-01-01"},
	} {
		t.Run("OK"+tc.header, func(t *testing.T) {
			got, err := vault.ResolveCompatibilityDate(tc.header)
			assert.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	for _, header := range []string{"", "2024-12-31", "2025-1-1", "2025-02-30", "20250101", "2025-01-01T00:00:00Z", " 2025-01-01", "tomorrow"} {
		t.Run("Invalid"+header, func(t *testing.T) {
			_, err := vault.ResolveCompatibilityDate(header)
			assert.Equal(t, canvas.EINVALIDCOMPATDATE, canvas.ErrorCode(err))
		})
	}
}
