package postgres_test

import (
	"testing"

	"github.com/promptcanvas/promptcanvas/vault"
	"github.com/promptcanvas/promptcanvas/vault/vaulttest"
)

func TestBlobs_Conformance(t *testing.T) {
	vaulttest.RunBlobs(t, func(t *testing.T) vault.Blobs { return mustOpen(t).Blobs() })
}
