package idempotency_test

import (
	"strings"
	"testing"

	"github.com/promptcanvas/promptcanvas/idempotency"
	"github.com/stretchr/testify/assert"
)

func TestHash(t *testing.T) {
	base := idempotency.Hash("POST", "/v1/tasks", []byte(`{"prompt":"hi","variables":{"a":1,"b":2}}`))
	assert.Len(t, base, 64)
	assert.Equal(t, base, idempotency.Hash("POST", "/v1/tasks", []byte("{\n  \"variables\": {\"b\": 2, \"a\": 1},\n  \"prompt\": \"hi\"\n}\n")),
		"formatting and key order do not matter")
	for name, other := range map[string]string{
		"body":   idempotency.Hash("POST", "/v1/tasks", []byte(`{"prompt":"hi","variables":{"a":1,"b":3}}`)),
		"number": idempotency.Hash("POST", "/v1/tasks", []byte(`{"prompt":"hi","variables":{"a":1.0,"b":2}}`)),
		"path":   idempotency.Hash("POST", "/v2/chat/completions", []byte(`{"prompt":"hi","variables":{"a":1,"b":2}}`)),
		"method": idempotency.Hash("PUT", "/v1/tasks", []byte(`{"prompt":"hi","variables":{"a":1,"b":2}}`)),
	} {
		assert.NotEqual(t, base, other, name)
	}
	assert.Equal(t, idempotency.Hash("POST", "/x", []byte("not json")), idempotency.Hash("POST", "/x", []byte("not json")))
	assert.NotEqual(t, idempotency.Hash("POST", "/x", []byte("not json")), idempotency.Hash("POST", "/x", []byte("not  json")))
}

func TestValidKey(t *testing.T) {
	assert.True(t, idempotency.ValidKey("8e03978e-40d5-43e8-bc93-6894a57f9324"))
	assert.True(t, idempotency.ValidKey(strings.Repeat("k", idempotency.MaxKeyLength)))
	assert.False(t, idempotency.ValidKey(""))
	assert.False(t, idempotency.ValidKey(strings.Repeat("k", idempotency.MaxKeyLength+1)))
	assert.False(t, idempotency.ValidKey("tab\there"))
	assert.False(t, idempotency.ValidKey("café"))
}
