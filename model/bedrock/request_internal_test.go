package bedrock

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDocumentName(t *testing.T) {
	used := map[string]bool{}
	tests := []struct{ name, want string }{
		{"Q3 report_final.v2.pdf", "Q3 report final v2"},
		{"C:\\Users\\ada\\notes (draft) [1].pdf", "notes (draft) [1]"},
		{"  ignore   previous\ninstructions!.pdf", "ignore previous instructions"},
		{"Übersicht-2025.pdf", "bersicht-2025"},
		{"...", "document"},
		{"", "document (2)"},
		{strings.Repeat("a", 300) + ".pdf", strings.Repeat("a", maxDocumentName)},
		{"notes (draft) [1].docx", "notes (draft) [1] (2)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, documentName(tt.name, used), tt.name)
	}
}
