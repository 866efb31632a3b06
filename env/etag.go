package env

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/promptcanvas/promptcanvas/canvas"
)

// ServedVersion is what an environment serves, as the server writes it: the
// version's JSON and its strong ETag. Both are shared and read-only.
type ServedVersion struct {
	// JSON is the version encoded as ActiveVersionJSON encodes it. It must
	// not be modified.
	JSON []byte
	// ETag is a strong entity tag (quoted) of what the environment
	// serves, its includes resolved: derived from JSON alone for a version
	// without includes, and from the resolved JSON (or the reason the
	// includes do not resolve) otherwise. So it changes when what is
	// served changes (a publish, a rollback, an edit of the served version,
	// and any of these to a version it includes, at any depth) and on
	// nothing else, and a plain and a resolved read share it. Each
	// version of a split has its own; a Stable read of a split has one
	// that covers every version of it.
	ETag string
	// PublicationID is the active publication; Variant, for a split, the
	// position of the entry served (nil otherwise).
	PublicationID string
	Variant       *int
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
	rel, err := s.activeRelease(ctx, params)
	if err != nil {
		return ServedVersion{}, err
	}
	sv, a := rel.assign(params)
	if params.Resolve {
		if sv.resolveErr != nil {
			return ServedVersion{}, sv.resolveErr
		}
		if sv.resolution != nil {
			if err := sv.resolution.checkAccess(canvas.PrincipalFrom(ctx), sv.canvas.ID); err != nil {
				return ServedVersion{}, err
			}
		}
	}
	raw, etag, err := sv.encoded()
	if err != nil {
		return ServedVersion{}, err
	}
	if params.Resolve {
		raw = sv.json.resolved
	}
	if rel.split != nil && params.Stable && params.AssignmentKey == "" {
		if etag, err = rel.stableTag(); err != nil {
			return ServedVersion{}, err
		}
	}
	return ServedVersion{JSON: raw, ETag: etag, PublicationID: a.PublicationID, Variant: a.Variant}, nil
}

// stableTag is the ETag of a split as a whole: of its publication and of
// every entry's weight and ETag, so that it changes when any version the
// split serves changes, and only then.
func (rel release) stableTag() (string, error) {
	b := []byte(rel.publicationID)
	for i, sv := range rel.variants {
		_, etag, err := sv.encoded()
		if err != nil {
			return "", err
		}
		b = fmt.Appendf(b, ";%d:%s", rel.split[i].Weight, etag)
	}
	return ETagOf(b), nil
}

// ResolvedVersion is the body of a resolved read: the version, its
// messages with their includes replaced, and what each include resolved
// to.
type ResolvedVersion struct {
	*canvas.Version
	ResolvedMessages []ResolvedMessage `json:"resolvedMessages"`
	Includes         []canvas.Include  `json:"includes"`
}

// ResolvedMessage is one message of a version with its includes replaced.
type ResolvedMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
	Index   int    `json:"index"`
}

// resolvedVersion is sv's ResolvedVersion; a version without includes
// resolves to its own messages.
func (sv served) resolvedVersion() ResolvedVersion {
	msgs := sv.version.Messages
	incs := []canvas.Include{}
	if sv.resolution != nil {
		msgs, incs = sv.resolution.Messages, sv.resolution.Includes
	}
	out := ResolvedVersion{Version: sv.version, ResolvedMessages: make([]ResolvedMessage, 0, len(msgs)), Includes: incs}
	for _, m := range msgs {
		if m.DeletedAt == nil {
			out.ResolvedMessages = append(out.ResolvedMessages, ResolvedMessage{ID: m.ID, Role: m.Role, Content: m.Content, Index: m.Index})
		}
	}
	return out
}

// encoded returns the served version's JSON and ETag, encoding them once.
func (sv served) encoded() ([]byte, string, error) {
	sv.json.once.Do(func() {
		sv.json.raw, sv.json.err = encode(sv.version)
		if sv.json.err != nil {
			return
		}
		if sv.resolveErr == nil {
			sv.json.resolved, sv.json.err = encode(sv.resolvedVersion())
		}
		switch {
		case sv.resolution != nil:
			sv.json.etag = ETagOf(sv.json.resolved)
		case sv.resolveErr != nil:
			sv.json.etag = ETagOf(fmt.Appendf(slices.Clone(sv.json.raw), "%v", canvas.ErrorDetails(sv.resolveErr)))
		default:
			sv.json.etag = ETagOf(sv.json.raw)
		}
	})
	return sv.json.raw, sv.json.etag, sv.json.err
}

// encode encodes v as the server writes every body: HTML escaping off, a
// newline at the end.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
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
