package env

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
)

// ServedVersion is what an environment serves, as the server writes it: the
// version's JSON and its strong ETag. Both are shared and read-only.
type ServedVersion struct {
	// JSON is the version encoded as ActiveVersionJSON encodes it. It must
	// not be modified.
	JSON []byte
	// ETag is a strong entity tag (quoted) derived from JSON alone, so it
	// changes when what is served changes (a publish, a rollback, an edit of
	// the served version) and on nothing else.
	ETag string
}

// ETagOf returns the strong ETag of a response body: the quoted hex of the
// first 16 bytes of its SHA-256.
func ETagOf(body []byte) string {
	sum := sha256.Sum256(body)
	var b [34]byte
	b[0], b[33] = '"', '"'
	hex.Encode(b[1:33], sum[:16])
	return string(b[:])
}

// ActiveVersionServed is ActiveVersionJSON without the copy, with the ETag
// of the bytes: a cached read costs no encoding and no hashing. It has the
// same authorization and errors as ActiveVersion.
func (s *Service) ActiveVersionServed(ctx context.Context, params ActiveVersionParams) (ServedVersion, error) {
	sv, err := s.activeServed(ctx, params)
	if err != nil {
		return ServedVersion{}, err
	}
	raw, etag, err := sv.encoded()
	if err != nil {
		return ServedVersion{}, err
	}
	return ServedVersion{JSON: raw, ETag: etag}, nil
}

// encoded returns the served version's JSON and ETag, encoding them once.
func (sv served) encoded() ([]byte, string, error) {
	sv.json.once.Do(func() {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		sv.json.err = enc.Encode(sv.version)
		sv.json.raw = buf.Bytes()
		sv.json.etag = ETagOf(sv.json.raw)
	})
	return sv.json.raw, sv.json.etag, sv.json.err
}

// Changed returns a channel that is closed at the next publish or
// environment deletion this Service makes. It is an in-process hint for
// watchers, not a guarantee: changes made by other processes, or by other
// services (deleting a canvas, editing a version), are not signalled, so a
// watcher also checks the store's data version periodically.
func (s *Service) Changed() <-chan struct{} {
	return s.changes.wait()
}

// notifier broadcasts "something changed" by closing a channel. Its zero
// value is ready to use.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns the channel the next notify closes.
func (n *notifier) wait() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

// notify wakes every waiter.
func (n *notifier) notify() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}
