package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/store"
)

// signingKey is a key whose bytes say which it is; the store keeps them
// without looking inside.
func signingKey(kid string, minute int) store.SigningKey {
	return store.SigningKey{
		KID:       kid,
		Public:    bytes.Repeat([]byte{byte(minute)}, 32),
		Private:   bytes.Repeat([]byte{byte(minute + 100)}, 32),
		CreatedAt: at(minute),
	}
}

func signingKeys(t *testing.T, s store.Store, publisher string) []store.SigningKey {
	t.Helper()
	ks, err := s.SigningKeys(t.Context(), publisher)
	wantErr(t, fmt.Sprintf("SigningKeys(%q)", publisher), err, nil)
	for _, k := range ks {
		if k.CreatedAt.Location() != time.UTC || (k.RetiredAt != nil && k.RetiredAt.Location() != time.UTC) {
			t.Errorf("SigningKeys(%q): key %s times are not UTC: %v, %v", publisher, k.KID, k.CreatedAt, k.RetiredAt)
		}
	}
	return ks
}

// testSigningKeys: a publisher starts with no key, gets one active key,
// and each rotation retires the active key at the new key's creation;
// keys are listed newest first and kept per publisher.
func testSigningKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	if ks := signingKeys(t, s, alpha.ID); len(ks) != 0 {
		t.Fatalf("a new publisher has keys: %v", ks)
	}
	first := signingKey("k-alpha-1", 1)
	wantErr(t, "CreateSigningKey(first)", s.CreateSigningKey(ctx, alpha.ID, first), nil)
	wantErr(t, "CreateSigningKey(second while one is active)", s.CreateSigningKey(ctx, alpha.ID, signingKey("k-alpha-x", 2)), store.ErrExists)
	if diff := cmp.Diff([]store.SigningKey{first}, signingKeys(t, s, alpha.ID)); diff != "" {
		t.Errorf("after creation (-want +got):\n%s", diff)
	}

	second := signingKey("k-alpha-2", 5)
	wantErr(t, "RotateSigningKey(second)", s.RotateSigningKey(ctx, alpha.ID, second), nil)
	third := signingKey("k-alpha-3", 9)
	wantErr(t, "RotateSigningKey(third)", s.RotateSigningKey(ctx, alpha.ID, third), nil)
	wantErr(t, "RotateSigningKey(a kid already used)", s.RotateSigningKey(ctx, alpha.ID, signingKey("k-alpha-1", 12)), store.ErrExists)

	retired := func(k store.SigningKey, minute int) store.SigningKey {
		when := at(minute)
		k.RetiredAt = &when
		return k
	}
	want := []store.SigningKey{third, retired(second, 9), retired(first, 5)}
	if diff := cmp.Diff(want, signingKeys(t, s, alpha.ID)); diff != "" {
		t.Errorf("after two rotations (-want +got):\n%s", diff)
	}

	// Rotation also makes a first key; keys are kept per publisher.
	wantErr(t, "RotateSigningKey(beta's first)", s.RotateSigningKey(ctx, beta.ID, signingKey("k-beta-1", 3)), nil)
	if ks := signingKeys(t, s, beta.ID); len(ks) != 1 || ks[0].KID != "k-beta-1" || ks[0].RetiredAt != nil {
		t.Errorf("beta's keys = %v, want its one active key", ks)
	}
	if diff := cmp.Diff(want, signingKeys(t, s, alpha.ID)); diff != "" {
		t.Errorf("alpha's keys changed by beta's rotation (-want +got):\n%s", diff)
	}

	// What a caller holds is a copy.
	ks := signingKeys(t, s, alpha.ID)
	ks[0].Private[0] ^= 0xff
	if got := signingKeys(t, s, alpha.ID)[0].Private; !bytes.Equal(got, third.Private) {
		t.Error("changing a returned key changed the stored one")
	}
}

// testSigningKeyRaces: of replicas creating a publisher's first key at
// once exactly one wins, and concurrent rotations leave one active key
// and every other retired.
func testSigningKeyRaces(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	const n = 8
	var won atomic.Int32
	parallel(n, func(i int) {
		err := s.CreateSigningKey(ctx, alpha.ID, signingKey(fmt.Sprintf("k-create-%d", i), 1))
		switch {
		case err == nil:
			won.Add(1)
		case !errors.Is(err, store.ErrExists):
			t.Errorf("CreateSigningKey(%d) = %v, want nil or ErrExists", i, err)
		}
	})
	if won.Load() != 1 {
		t.Errorf("%d concurrent first keys were created, want exactly 1", won.Load())
	}
	parallel(n, func(i int) {
		if err := s.RotateSigningKey(ctx, alpha.ID, signingKey(fmt.Sprintf("k-rotate-%d", i), 2+i)); err != nil {
			t.Errorf("RotateSigningKey(%d) = %v", i, err)
		}
	})
	ks := signingKeys(t, s, alpha.ID)
	active := 0
	for _, k := range ks {
		if k.RetiredAt == nil {
			active++
		}
	}
	if len(ks) != n+1 || active != 1 || ks[0].RetiredAt != nil {
		t.Errorf("after %d concurrent rotations: %d keys, %d active (first active: %v), want %d keys with the first the only active one", n, len(ks), active, ks[0].RetiredAt == nil, n+1)
	}
}
