package keyring_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/storefront/storefront/store/keyring"
)

func key(t *testing.T, id string) keyring.Key {
	t.Helper()
	k, err := keyring.Generate(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ring(t *testing.T, keys ...keyring.Key) *keyring.Keyring {
	t.Helper()
	k, err := keyring.New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestSealOpen: a sealed secret opens under the same keyring and context
// and shows nothing of the secret; each sealing is fresh.
func TestSealOpen(t *testing.T) {
	k := ring(t, key(t, "k1"))
	secret := []byte("whsec_0123456789abcdef0123456789abcdef")
	a, err := k.Seal(secret, "task|alpha|t1|credentials")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Seal(secret, "task|alpha|t1|credentials")
	if bytes.Contains(a, secret) || bytes.Contains(a, []byte("0123456789abcdef")) || bytes.Equal(a, b) {
		t.Errorf("Seal = %q and %q: want no trace of the secret, and a fresh nonce each time", a, b)
	}
	if id, ok := keyring.KeyID(a); !ok || id != "k1" || !strings.HasPrefix(string(a), keyring.Prefix+"k1:") {
		t.Errorf("KeyID(%q) = %q, %v; want k1", a, id, ok)
	}
	got, err := k.Open(a, "task|alpha|t1|credentials")
	if err != nil || !bytes.Equal(got, secret) {
		t.Errorf("Open = %q, %v; want the secret", got, err)
	}
}

// TestFailsClosed: a value opens only under its own key and context,
// unaltered; anything else is an error saying which, never a secret.
func TestFailsClosed(t *testing.T) {
	k1, k2 := key(t, "k1"), key(t, "k2")
	sealed, err := ring(t, k1).Seal([]byte("s3cret-value"), "ctx")
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-3] ^= 'A' ^ 'B'
	wrong := k1
	wrong.Secret = k2.Secret // the right id, the wrong key
	for _, test := range []struct {
		name    string
		ring    *keyring.Keyring
		value   []byte
		context string
		want    error
	}{
		{"another key", ring(t, k2), sealed, "ctx", keyring.ErrUnknownKey},
		{"the id of its key with another secret", ring(t, wrong), sealed, "ctx", keyring.ErrCorrupt},
		{"another row", ring(t, k1), sealed, "other ctx", keyring.ErrCorrupt},
		{"altered", ring(t, k1), flipped, "ctx", keyring.ErrCorrupt},
		{"truncated", ring(t, k1), sealed[:len(keyring.Prefix)+5], "ctx", keyring.ErrCorrupt},
		{"no keyring", nil, sealed, "ctx", keyring.ErrNoKey},
	} {
		got, err := test.ring.Open(test.value, test.context)
		if !errors.Is(err, test.want) || got != nil {
			t.Errorf("%s: Open = %q, %v; want %v", test.name, got, err, test.want)
		}
	}
	if _, err := (*keyring.Keyring)(nil).Seal([]byte("x"), "ctx"); !errors.Is(err, keyring.ErrNoKey) {
		t.Errorf("Seal without a keyring = %v, want ErrNoKey", err)
	}
}

// TestRotation: a keyring opens what any of its keys sealed, seals with
// the newest, and Reseal moves a value (or a plaintext one from an
// earlier release) to the newest key.
func TestRotation(t *testing.T) {
	old, newer := key(t, "2025-01"), key(t, "2026-06")
	before := ring(t, old)
	after := ring(t, newer, old)
	sealed, _ := before.Seal([]byte("credential"), "ctx")
	if got, err := after.Open(sealed, "ctx"); err != nil || string(got) != "credential" {
		t.Fatalf("the rotated keyring opens the old value as %q, %v", got, err)
	}
	if after.Current() != "2026-06" {
		t.Errorf("Current = %q, want the first key given", after.Current())
	}
	moved, changed, err := after.Reseal(sealed, "ctx")
	if id, _ := keyring.KeyID(moved); err != nil || !changed || id != "2026-06" {
		t.Fatalf("Reseal = %q, %v, %v; want it under 2026-06", moved, changed, err)
	}
	if _, err := ring(t, newer).Open(moved, "ctx"); err != nil {
		t.Errorf("the resealed value does not open without the old key: %v", err)
	}
	if again, changed, _ := after.Reseal(moved, "ctx"); changed || !bytes.Equal(again, moved) {
		t.Error("Reseal changed a value already under the newest key")
	}
	plain, changed, err := after.Reseal([]byte("legacy plaintext"), "ctx")
	if got, _ := after.Open(plain, "ctx"); err != nil || !changed || string(got) != "legacy plaintext" {
		t.Errorf("Reseal(plaintext) = %q, %v, %v; want it sealed", plain, changed, err)
	}
	if s, err := after.OpenString("legacy plaintext", "ctx"); err != nil || s != "legacy plaintext" {
		t.Errorf("OpenString(plaintext) = %q, %v; want it as stored", s, err)
	}
}

// TestParse: keys as configuration writes them.
func TestParse(t *testing.T) {
	a, b := key(t, "a"), key(t, "b")
	keys, err := keyring.Parse("# newest first\n" + b.String() + "\n\n" + a.String() + "\n")
	if err != nil || len(keys) != 2 || keys[0].ID != "b" || !bytes.Equal(keys[1].Secret, a.Secret) {
		t.Fatalf("Parse(file) = %+v, %v", keys, err)
	}
	if keys, err := keyring.Parse(b.String() + "," + a.String()); err != nil || len(keys) != 2 {
		t.Fatalf("Parse(comma list) = %+v, %v", keys, err)
	}
	for _, bad := range []string{"no-colon", "k:not base64!"} {
		if _, err := keyring.Parse(bad); err == nil {
			t.Errorf("Parse(%q) = nil error", bad)
		}
	}
	for _, keys := range [][]keyring.Key{
		{{ID: "short", Secret: []byte("sixteen bytes!!!")}},
		{a, a},
		{{ID: "bad id", Secret: a.Secret}},
		nil,
	} {
		if _, err := keyring.New(keys...); err == nil {
			t.Errorf("New(%v) = nil error", keys)
		}
	}
}
