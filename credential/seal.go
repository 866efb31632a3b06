package credential

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// KeySize is the size of a key-encryption key: AES-256.
const KeySize = 32

// Key is one key-encryption key: its id, stored beside every ciphertext it
// sealed, and its bytes.
type Key struct {
	ID     string
	Secret [KeySize]byte
}

// NewKey returns a new random key whose id tells when it was made
// ("20261127-3f9a1c2e").
func NewKey() Key {
	var k Key
	_, _ = rand.Read(k.Secret[:])
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	k.ID = time.Now().UTC().Format("20060102") + "-" + hex.EncodeToString(suffix[:])
	return k
}

// Sealed is a secret sealed under a key-encryption key: the AES-256-GCM
// ciphertext (with its tag), its nonce, and the id of the key.
type Sealed struct {
	Ciphertext []byte
	Nonce      []byte
	KeyID      string
}

// KeyRing holds the key-encryption keys of a deployment, the current one
// first. It seals under the current key and opens under any key it holds,
// so that ciphertexts sealed under an older key keep opening while a
// rotation re-seals them.
//
// A KeyRing loaded from a file (LoadKeyFile) follows the file: it reads it
// again when it meets a key id it does not hold and, before sealing, when
// the file was replaced, so that every process sharing the file (replicas,
// canvasd secrets rotate-key beside a server) seals under the newest key
// and opens what the others sealed.
type KeyRing struct {
	path string

	mu   sync.Mutex
	keys []Key
	info os.FileInfo // of the file when it was read
}

// NewKeyRing returns a key ring of keys, the current one first; it follows
// no file.
func NewKeyRing(keys ...Key) (*KeyRing, error) {
	if err := checkKeys(keys); err != nil {
		return nil, err
	}
	return &KeyRing{keys: keys}, nil
}

func checkKeys(keys []Key) error {
	if len(keys) == 0 {
		return errors.New("a key ring needs at least one key")
	}
	seen := map[string]bool{}
	for _, k := range keys {
		if !validKeyID(k.ID) {
			return fmt.Errorf("key id %q: use 1 to 64 letters, digits, '-' or '_'", k.ID)
		}
		if seen[k.ID] {
			return fmt.Errorf("key id %q appears twice", k.ID)
		}
		seen[k.ID] = true
	}
	return nil
}

func validKeyID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Keys returns the ring's keys, the current one first.
func (r *KeyRing) Keys() []Key {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Key(nil), r.keys...)
}

// Current returns the id of the key new ciphertexts are sealed under.
func (r *KeyRing) Current() string {
	r.refresh(false)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keys[0].ID
}

// Seal seals plaintext under the current key, bound to the credential id of
// workspaceID: it opens only with the same two ids.
func (r *KeyRing) Seal(workspaceID, id string, plaintext []byte) (Sealed, error) {
	r.refresh(false)
	r.mu.Lock()
	k := r.keys[0]
	r.mu.Unlock()
	aead, err := newAEAD(k.Secret)
	if err != nil {
		return Sealed{}, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return Sealed{}, err
	}
	return Sealed{Ciphertext: aead.Seal(nil, nonce, plaintext, associated(workspaceID, id)), Nonce: nonce, KeyID: k.ID}, nil
}

// ErrOpen is the error of Open for a ciphertext that does not open: sealed
// for another row, under a key the ring does not hold, or altered.
var ErrOpen = errors.New("credential: the sealed key does not open")

// Open returns the plaintext of s, sealed for the credential id of
// workspaceID. A key id the ring does not hold makes a ring that follows
// a file read it again first.
func (r *KeyRing) Open(workspaceID, id string, s Sealed) ([]byte, error) {
	k, ok := r.key(s.KeyID)
	if !ok {
		r.refresh(true)
		if k, ok = r.key(s.KeyID); !ok {
			return nil, fmt.Errorf("%w: key %q is not in the key ring", ErrOpen, s.KeyID)
		}
	}
	aead, err := newAEAD(k.Secret)
	if err != nil {
		return nil, err
	}
	if len(s.Nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("%w: bad nonce", ErrOpen)
	}
	out, err := aead.Open(nil, s.Nonce, s.Ciphertext, associated(workspaceID, id))
	if err != nil {
		return nil, ErrOpen
	}
	return out, nil
}

func (r *KeyRing) key(id string) (Key, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		if k.ID == id {
			return k, true
		}
	}
	return Key{}, false
}

// refresh reads the ring's file again when it follows one and, unless
// force, only when the file was replaced or changed since it was read. A
// file that cannot be read leaves the ring as it was.
func (r *KeyRing) refresh(force bool) {
	if r.path == "" {
		return
	}
	info, err := os.Stat(r.path)
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !force && r.info != nil && os.SameFile(r.info, info) && r.info.ModTime().Equal(info.ModTime()) &&
		r.info.Size() == info.Size() {
		return
	}
	keys, info, err := readKeyFile(r.path)
	if err != nil {
		return
	}
	r.keys, r.info = keys, info
}

func newAEAD(secret [KeySize]byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(secret[:])
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// associated is the associated data that binds a ciphertext to its row.
func associated(workspaceID, id string) []byte {
	return []byte("promptcanvas credential\x00" + workspaceID + "\x00" + id)
}

// keyFileHeader opens every key file written.
const keyFileHeader = `# Prompt Canvas secrets key file: the key-encryption keys that seal
# credentials, one "<id> <base64 of 32 bytes>" a line, the current key
# first. Keep it secret (mode 0600) and back it up with the database:
# without it, the credentials stored there cannot be opened.
`

// LoadKeyFile reads the key file at path. A file that its group or others
// may read or write is refused: it holds the keys of every credential.
func LoadKeyFile(path string) (*KeyRing, error) {
	keys, info, err := readKeyFile(path)
	if err != nil {
		return nil, err
	}
	return &KeyRing{path: path, keys: keys, info: info}, nil
}

func readKeyFile(path string) ([]Key, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("secrets key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("secrets key file: %w", err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, fmt.Errorf("secrets key file %s has mode %04o: it must be readable by its owner only (chmod 600 %s)",
			path, perm, path)
	}
	var keys []Key
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, enc, ok := strings.Cut(line, " ")
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
		if !ok || err != nil || len(raw) != KeySize {
			return nil, nil, fmt.Errorf("secrets key file %s, line %d: want \"<id> <base64 of %d bytes>\"", path, n, KeySize)
		}
		k := Key{ID: id}
		copy(k.Secret[:], raw)
		keys = append(keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("secrets key file: %w", err)
	}
	if err := checkKeys(keys); err != nil {
		return nil, nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	return keys, info, nil
}

// CreateKeyFile creates the key file path, mode 0600, holding one new key,
// and returns its ring. An existing file is an error: it is never
// overwritten.
func CreateKeyFile(path string) (*KeyRing, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	_, werr := f.Write(encodeKeys([]Key{NewKey()}))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return nil, errors.Join(fmt.Errorf("secrets key file: %w", err), os.Remove(path))
	}
	return LoadKeyFile(path)
}

// LoadOrCreateKeyFile loads the key file path, creating it first when it
// does not exist; created tells whether it did.
func LoadOrCreateKeyFile(path string) (ring *KeyRing, created bool, err error) {
	ring, err = LoadKeyFile(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return ring, false, err
	}
	ring, err = CreateKeyFile(path)
	if errors.Is(err, os.ErrExist) { // another process made it first
		ring, err = LoadKeyFile(path)
		return ring, false, err
	}
	return ring, err == nil, err
}

// WriteKeyFile replaces the key file path with keys, the current one first,
// atomically: the new file (mode 0600) is written beside it and renamed
// over it, so that a reader sees the old keys or the new ones, never a
// part.
func WriteKeyFile(path string, keys []Key) error {
	if err := checkKeys(keys); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secrets-key-*")
	if err != nil {
		return fmt.Errorf("secrets key file: %w", err)
	}
	_, werr := tmp.Write(encodeKeys(keys))
	err = errors.Join(werr, tmp.Chmod(0o600), tmp.Sync(), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return errors.Join(fmt.Errorf("secrets key file: %w", err), os.Remove(tmp.Name()))
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync() // the rename, durable where the system allows
		d.Close()
	}
	return nil
}

func encodeKeys(keys []Key) []byte {
	var b bytes.Buffer
	b.WriteString(keyFileHeader)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k.ID, base64.StdEncoding.EncodeToString(k.Secret[:]))
	}
	return b.Bytes()
}
