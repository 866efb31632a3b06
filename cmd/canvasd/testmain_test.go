package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain runs the test binary as canvasd itself when it is executed
// under that name (a symbolic link called canvasd, see exampleCanvasd), so
// that a script calling canvasd runs the real command without a build.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "canvasd" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
