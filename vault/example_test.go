package vault_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/promptcanvas/promptcanvas/canvas"
	"github.com/promptcanvas/promptcanvas/vault"
)

// Example_signedURL signs an upload URL and verifies it, then shows that a
// changed expiry and a late upload are both refused.
func Example_signedURL() {
	secret := bytes.Repeat([]byte{1}, 32)
	id := "0d9c4f7e-1111-4222-8333-444455556666"
	issued := time.Unix(1_750_000_000, 0)
	u, _ := url.Parse("https://canvas.example.com" + vault.SignedPath(secret, id, issued.Add(15*time.Minute)))
	q := u.Query()
	fmt.Println(u.Path)
	fmt.Println(q.Get("expires"))

	fmt.Println(vault.Verify(secret, id, q.Get("expires"), q.Get("signature"), issued) == nil)
	err := vault.Verify(secret, id, "1750009999", q.Get("signature"), issued)
	fmt.Println(canvas.ErrorCode(err))
	err = vault.Verify(secret, id, q.Get("expires"), q.Get("signature"), issued.Add(time.Hour))
	fmt.Println(canvas.ErrorCode(err))
	// Output:
	// /v3/files/0d9c4f7e-1111-4222-8333-444455556666/content
	// 1750000900
	// true
	// FORBIDDEN
	// FORBIDDEN
}

// ExampleResolveCompatibilityDate shows which dated behaviour a header
// selects.
func ExampleResolveCompatibilityDate() {
	for _, h := range []string{"2025-01-01", "2026-03-15", "2024-06-01", ""} {
		used, err := vault.ResolveCompatibilityDate(h)
		if err != nil {
			fmt.Printf("%q -> %s\n", h, canvas.ErrorCode(err))
			continue
		}
		fmt.Printf("%q -> %s\n", h, used)
	}
	// Output:
	// "2025-01-01" -> 2025-01-01
	// "2026-03-15" -> 2025-01-01
	// "2024-06-01" -> INVALID_COMPATIBILITY_DATE
	// "" -> INVALID_COMPATIBILITY_DATE
}

// ExampleFSBlobs stores bytes under a key, refusing a body over the limit.
func ExampleFSBlobs() {
	dir, _ := os.MkdirTemp("", "blobs")
	defer os.RemoveAll(dir)
	blobs, _ := vault.NewFSBlobs(dir)
	ctx := context.Background()

	size, sum, _ := blobs.Put(ctx, "greeting", strings.NewReader("hello"), 1024)
	fmt.Println(size, sum)
	_, _, err := blobs.Put(ctx, "big", strings.NewReader("too many bytes"), 4)
	fmt.Println(canvas.ErrorCode(err))
	// Output:
	// 5 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824
	// PAYLOAD_TOO_LARGE
}
