package idempotency_test

import (
	"fmt"

	"github.com/promptcanvas/promptcanvas/idempotency"
)

// ExampleHash shows that a JSON body's formatting and key order do not make
// a different request.
func ExampleHash() {
	a := idempotency.Hash("POST", "/v1/tasks", []byte(`{"prompt":"Hi","webhook_url":"https://example.com/hook"}`))
	b := idempotency.Hash("POST", "/v1/tasks", []byte(`{ "webhook_url": "https://example.com/hook", "prompt": "Hi" }`))
	c := idempotency.Hash("POST", "/v1/tasks", []byte(`{"prompt":"Hello","webhook_url":"https://example.com/hook"}`))
	fmt.Println(a == b, a == c)
	// Output: true false
}
