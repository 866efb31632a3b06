package vault_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/promptcanvas/promptcanvas/vault"
)

func TestValidateFileName(t *testing.T) {
	for _, ok := range []string{"notes.txt", "Résumé 2025.pdf", "a", strings.Repeat("x", 255), "..hidden"} {
		assert.NoError(t, vault.ValidateFileName(ok), ok)
	}
	for _, bad := range []string{"", "a/b.txt", `a\b.txt`, ".", "..", "tab\there", strings.Repeat("x", 256), "\xff.txt"} {
		assert.Error(t, vault.ValidateFileName(bad), bad)
	}
}

func TestParseAddress(t *testing.T) {
	id, ok := vault.ParseAddress("vault://3f1c2b4a-0000-4000-8000-000000000001")
	assert.True(t, ok)
	assert.Equal(t, "3f1c2b4a-0000-4000-8000-000000000001", id)
	assert.Equal(t, "vault://"+id, vault.Address(id))
	_, ok = vault.ParseAddress("https://example.com/a.png")
	assert.False(t, ok)
}
