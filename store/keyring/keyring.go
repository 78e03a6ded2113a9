// Package keyring seals the secrets the stores keep at rest: the
// credentials buyers register for their webhooks and governance agents,
// and the private halves of the publishers' webhook-signing keys. A
// secret is sealed with AES-256-GCM under the keyring's newest key, and
// the sealed value names its key, so that a keyring holding several keys
// opens what any of them sealed (rotation), and a value sealed under a key
// it does not hold fails with a clear error, never with a guess.
//
// Each value is sealed for a context (which row and field it belongs to)
// that must be given again to open it: a sealed value copied to another
// row does not open there.
//
// It must never hand back a secret it could not authenticate, nor store
// one unsealed.
package keyring

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
	"regexp"
	"strings"
)

// Prefix starts every sealed value: "sealed:1:<key id>:<base64url of
// nonce and ciphertext>".
const Prefix = "sealed:1:"

// KeySize is the length of a key: AES-256.
const KeySize = 32

// Errors of opening and sealing.
var (
	// ErrNoKey: no key is configured, so nothing can be sealed, nor a
	// sealed value opened.
	ErrNoKey = errors.New("keyring: no secret key is configured")
	// ErrUnknownKey: the value was sealed under a key the keyring does
	// not hold.
	ErrUnknownKey = errors.New("keyring: the secret was sealed under a key that is not configured")
	// ErrCorrupt: the value does not authenticate under its key and
	// context (altered, moved to another row, or the key is wrong).
	ErrCorrupt = errors.New("keyring: the sealed secret does not authenticate")
)

// Key is one secret key.
type Key struct {
	// ID names the key in every value it seals.
	ID     string
	Secret []byte
}

// Keyring holds the keys secrets are sealed and opened with; the first is
// the newest, which seals. A nil *Keyring holds none.
type Keyring struct {
	ids   []string
	aeads map[string]cipher.AEAD
}

var keyID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// New returns a keyring of keys, newest first.
func New(keys ...Key) (*Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("keyring: no keys given")
	}
	k := &Keyring{aeads: map[string]cipher.AEAD{}}
	for _, key := range keys {
		if !keyID.MatchString(key.ID) {
			return nil, fmt.Errorf("keyring: key id %q: use 1 to 64 letters, digits, '.', '_' or '-'", key.ID)
		}
		if _, dup := k.aeads[key.ID]; dup {
			return nil, fmt.Errorf("keyring: key id %q is given twice", key.ID)
		}
		if len(key.Secret) != KeySize {
			return nil, fmt.Errorf("keyring: key %q is %d bytes, want %d", key.ID, len(key.Secret), KeySize)
		}
		block, err := aes.NewCipher(key.Secret)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		k.ids = append(k.ids, key.ID)
		k.aeads[key.ID] = aead
	}
	return k, nil
}

// Generate returns a fresh random key named id, or a random name when id
// is "".
func Generate(id string) (Key, error) {
	secret := make([]byte, KeySize)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, err
	}
	if id == "" {
		b := make([]byte, 4)
		if _, err := rand.Read(b); err != nil {
			return Key{}, err
		}
		id = "key-" + hex.EncodeToString(b)
	}
	return Key{ID: id, Secret: secret}, nil
}

// Random returns a keyring of one fresh random key: for a store whose
// secrets live no longer than the process.
func Random() *Keyring {
	key, err := Generate("process-" + randomHex())
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	k, _ := New(key)
	return k
}

func randomHex() string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// String is how a key is written in configuration: "<id>:<base64 secret>".
func (k Key) String() string { return k.ID + ":" + base64.StdEncoding.EncodeToString(k.Secret) }

// Parse reads keys as configuration writes them: "<id>:<base64 secret>"
// entries, newest first, separated by commas or lines; blank lines and
// lines starting with # are ignored. The secret is 32 bytes in standard
// or URL-safe base64.
func Parse(text string) ([]Key, error) {
	var keys []Key
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		for _, entry := range strings.Split(line, ",") {
			entry = strings.TrimSpace(entry)
			if entry == "" {
				continue
			}
			id, secret, ok := strings.Cut(entry, ":")
			if !ok {
				return nil, fmt.Errorf("keyring: line %d: want <id>:<base64 key>", n)
			}
			b, err := decode(strings.TrimSpace(secret))
			if err != nil {
				return nil, fmt.Errorf("keyring: line %d: key %q is not base64", n, id)
			}
			keys = append(keys, Key{ID: strings.TrimSpace(id), Secret: b})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return keys, nil
}

func decode(s string) ([]byte, error) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// Current is the id of the key that seals, "" for no keyring.
func (k *Keyring) Current() string {
	if k == nil {
		return ""
	}
	return k.ids[0]
}

// Has reports whether the keyring holds the key named id.
func (k *Keyring) Has(id string) bool {
	if k == nil {
		return false
	}
	_, ok := k.aeads[id]
	return ok
}

// IDs are the keyring's key ids, newest first.
func (k *Keyring) IDs() []string {
	if k == nil {
		return nil
	}
	return append([]string(nil), k.ids...)
}

// Seal seals secret for context under the newest key.
func (k *Keyring) Seal(secret []byte, context string) ([]byte, error) {
	if k == nil {
		return nil, ErrNoKey
	}
	id := k.ids[0]
	aead := k.aeads[id]
	nonce := make([]byte, aead.NonceSize(), aead.NonceSize()+len(secret)+aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	sealed := aead.Seal(nonce, nonce, secret, aad(id, context))
	out := make([]byte, 0, len(Prefix)+len(id)+1+base64.RawURLEncoding.EncodedLen(len(sealed)))
	out = append(out, Prefix...)
	out = append(out, id...)
	out = append(out, ':')
	return base64.RawURLEncoding.AppendEncode(out, sealed), nil
}

// aad binds a value to its key and context.
func aad(id, context string) []byte { return []byte(Prefix + id + "\x00" + context) }

// Sealed reports whether v is a sealed value (by its form: it need not
// open).
func Sealed(v []byte) bool { return bytes.HasPrefix(v, []byte(Prefix)) }

// KeyID is the id of the key v was sealed under; ok is false when v is
// not sealed.
func KeyID(v []byte) (id string, ok bool) {
	if !Sealed(v) {
		return "", false
	}
	id, _, ok = strings.Cut(string(v[len(Prefix):]), ":")
	return id, ok
}

// Open returns the secret sealed in v for context. ErrNoKey, ErrUnknownKey
// and ErrCorrupt say why it cannot.
func (k *Keyring) Open(v []byte, context string) ([]byte, error) {
	id, ok := KeyID(v)
	if !ok {
		return nil, fmt.Errorf("%w: the value is not sealed", ErrCorrupt)
	}
	if k == nil {
		return nil, fmt.Errorf("%w (the secret is sealed under key %q)", ErrNoKey, id)
	}
	aead, ok := k.aeads[id]
	if !ok {
		return nil, fmt.Errorf("%w: key %q (configured: %s)", ErrUnknownKey, id, strings.Join(k.ids, ", "))
	}
	raw, err := base64.RawURLEncoding.DecodeString(string(v[len(Prefix)+len(id)+1:]))
	if err != nil || len(raw) < aead.NonceSize()+aead.Overhead() {
		return nil, fmt.Errorf("%w under key %q", ErrCorrupt, id)
	}
	secret, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], aad(id, context))
	if err != nil {
		return nil, fmt.Errorf("%w under key %q", ErrCorrupt, id)
	}
	return secret, nil
}

// SealString seals a text secret; "" stays "" (nothing to keep).
func (k *Keyring) SealString(secret, context string) (string, error) {
	if secret == "" {
		return "", nil
	}
	b, err := k.Seal([]byte(secret), context)
	return string(b), err
}

// OpenString opens a text secret sealed by SealString. A value that is not
// sealed was stored by a release that kept secrets in plaintext: it is
// returned as it is, and sealed by the next Reseal.
func (k *Keyring) OpenString(v, context string) (string, error) {
	if v == "" || !Sealed([]byte(v)) {
		return v, nil
	}
	b, err := k.Open([]byte(v), context)
	return string(b), err
}

// Reseal returns v sealed under the newest key, and whether that changed
// it: a plaintext value (from an earlier release) is sealed, one sealed
// under an older key is opened and sealed again, and one already under the
// newest key is left as it is, once it has opened.
func (k *Keyring) Reseal(v []byte, context string) ([]byte, bool, error) {
	if k == nil {
		return nil, false, ErrNoKey
	}
	if len(v) == 0 {
		return v, false, nil
	}
	if id, ok := KeyID(v); ok {
		// Opened even when it stays as it is: a reseal proves that the
		// keyring opens every secret it keeps.
		secret, err := k.Open(v, context)
		if err != nil {
			return nil, false, err
		}
		if id == k.ids[0] {
			return v, false, nil
		}
		v = secret
	}
	out, err := k.Seal(v, context)
	return out, err == nil, err
}
