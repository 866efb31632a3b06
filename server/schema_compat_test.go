package server

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/promptcanvas/promptcanvas/vault"
)

// TestOpenAPI_CompatibilityDatePattern checks that the pattern openapi.json
// gives x-compatibility-date admits exactly the dates the vault accepts:
// real days from the first supported date on.
func TestOpenAPI_CompatibilityDatePattern(t *testing.T) {
	var doc struct {
		Components struct {
			Parameters map[string]struct {
				Schema struct{ Pattern string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(openAPIDocument, &doc))
	rx, err := regexp.Compile(doc.Components.Parameters["CompatibilityDate"].Schema.Pattern)
	require.NoError(t, err)

	check := func(s string) {
		_, err := vault.ResolveCompatibilityDate(s)
		assert.Equal(t, err == nil, rx.MatchString(s), "%q", s)
	}
	for d := time.Date(2024, 11, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2031; d = d.AddDate(0, 0, 1) {
		check(d.Format(time.DateOnly))
	}
	for _, s := range []string{"2028-02-29", "2100-02-29", "2400-02-29", "2025-02-29", "2025-02-30", "2025-04-31",
		"2025-13-01", "2025-00-10", "2025-01-00", "2025-1-1", "25-01-01", "2025/01/01", "2025-01-01T00:00:00Z",
		" 2025-01-01", "", "9999-12-31", "10000-01-01", "2024-12-31", "1999-01-01"} {
		check(s)
	}
}
