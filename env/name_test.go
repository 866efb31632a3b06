package env_test

import (
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/env"
	"github.com/stretchr/testify/assert"
)

func TestCheckCustomName(t *testing.T) {
	long64 := strings.Repeat("a", 64)
	tests := []struct {
		name string
		in   string
		want string // "" means INVALID_ENVIRONMENT_NAME
	}{
		{"Plain", "staging", "staging"},
		{"Digits", "qa2", "qa2"},
		{"Hyphenated", "eu-west-1", "eu-west-1"},
		{"TrimsSpaces", "  staging \t", "staging"},
		{"Exactly64", long64, long64},
		{"Exactly64AfterTrim", "  " + long64 + " ", long64},
		{"TooLong65", long64 + "a", ""},
		{"Empty", "", ""},
		{"OnlySpaces", "   ", ""},
		{"Uppercase", "Staging", ""},
		{"DoubleHyphen", "pre--prod", ""},
		{"LeadingHyphen", "-staging", ""},
		{"TrailingHyphen", "staging-", ""},
		{"Underscore", "pre_prod", ""},
		{"InnerSpace", "pre prod", ""},
		{"NonASCII", "prodé", ""},
		{"ReservedProduction", "production", ""},
		{"ReservedPromoted", "promoted", ""},
		{"ReservedLatest", "latest", ""},
		{"ReservedDraft", "draft", ""},
		{"ReservedAfterTrim", " latest ", ""},
		{"UUID", "0b6d8f5e-3c1a-4b2e-9f4d-7a8b9c0d1e2f", ""},
		{"UUIDLikeButShort", "0b6d8f5e-3c1a-4b2e-9f4d", "0b6d8f5e-3c1a-4b2e-9f4d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := env.CheckCustomName(tt.in)
			if tt.want == "" {
				assert.Equal(t, canvas.EINVALIDENVNAME, canvas.ErrorCode(err), "name %q", tt.in)
				assert.Empty(t, got)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCheckPublishName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" means INVALID_ENVIRONMENT_NAME
	}{
		{"Production", "production", "production"},
		{"ProductionTrimmed", " production ", "production"},
		{"Custom", "staging", "staging"},
		{"Promoted", "promoted", ""},
		{"Latest", "latest", ""},
		{"Draft", "draft", ""},
		{"UppercaseProduction", "Production", ""},
		{"UUID", "0B6D8F5E-3C1A-4B2E-9F4D-7A8B9C0D1E2F", ""},
		{"LowercaseUUID", "0b6d8f5e-3c1a-4b2e-9f4d-7a8b9c0d1e2f", ""},
		{"Empty", "", ""},
		{"DoubleHyphen", "a--b", ""},
		{"TooLong65", strings.Repeat("b", 65), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := env.CheckPublishName(tt.in)
			if tt.want == "" {
				assert.Equal(t, canvas.EINVALIDENVNAME, canvas.ErrorCode(err), "name %q", tt.in)
				assert.Empty(t, got)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNormalizeName(t *testing.T) {
	t.Run("ReservedPass", func(t *testing.T) {
		for _, n := range []string{"production", "promoted", "latest", "draft"} {
			got, err := env.NormalizeName(n)
			assert.NoError(t, err)
			assert.Equal(t, n, got)
		}
	})
	t.Run("MessageQuotesName", func(t *testing.T) {
		_, err := env.NormalizeName("Bad Name")
		assert.Contains(t, canvas.ErrorMessage(err), `"Bad Name"`)
	})
}

func TestClampLimit(t *testing.T) {
	for in, want := range map[int]int{-5: 1, 0: 1, 1: 1, 20: 20, 100: 100, 101: 100, 1000: 100} {
		assert.Equal(t, want, env.ClampLimit(in), "limit %d", in)
	}
}
