package credential_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/promptcanvas/promptcanvas/credential"
)

// ExampleKeyRing seals a key for one credential row and opens it again; the
// ciphertext opens for that row only.
func ExampleKeyRing() {
	ring, err := credential.NewKeyRing(credential.NewKey())
	if err != nil {
		log.Fatal(err)
	}
	const workspace, id = "9a7c2b1e-0000-4000-8000-00000000000a", "5f1d0c3a-0000-4000-8000-00000000000a"
	sealed, err := ring.Seal(workspace, id, []byte("sk-ant-example"))
	if err != nil {
		log.Fatal(err)
	}
	key, err := ring.Open(workspace, id, sealed)
	fmt.Println(string(key), err)
	_, err = ring.Open(workspace, "5f1d0c3a-0000-4000-8000-00000000000b", sealed)
	fmt.Println(errors.Is(err, credential.ErrOpen))
	// Output:
	// sk-ant-example <nil>
	// true
}
