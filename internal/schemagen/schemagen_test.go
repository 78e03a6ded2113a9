package schemagen_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/storefront/storefront/internal/schemagen"
	"github.com/storefront/storefront/internal/spectest"
)

func load(t *testing.T) *schemagen.Generator {
	t.Helper()
	g, err := schemagen.Load(filepath.Join(spectest.Dir(t), "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGenerateRequired: with no entropy a document is minimal, holding
// exactly what the schema requires; with entropy it grows optional members
// of the right types.
func TestGenerateRequired(t *testing.T) {
	g := load(t)
	doc, ok := g.Generate("media-buy/create-media-buy-request.json", schemagen.NewSource(nil)).(map[string]any)
	if !ok {
		t.Fatalf("Generate(create-media-buy-request) is not an object")
	}
	for _, name := range []string{"account", "brand", "start_time", "end_time", "idempotency_key"} {
		if _, ok := doc[name]; !ok {
			t.Errorf("minimal create_media_buy lacks required %s: %v", name, doc)
		}
	}
	rich := g.Generate("media-buy/get-products-request.json", schemagen.NewSource(bytes.Repeat([]byte{0xff}, 4096))).(map[string]any)
	if len(rich) < 5 {
		t.Errorf("with entropy get_products has only %d members: %v", len(rich), rich)
	}
	if b, ok := rich["brief"]; ok {
		if _, isString := b.(string); !isString {
			t.Errorf("brief = %#v, want a string", b)
		}
	}
}

// TestGeneratedValidate: most entropy gives get_products requests the
// official schema accepts, so fuzzing spends its time past decoding.
func TestGeneratedValidate(t *testing.T) {
	g := load(t)
	valid := 0
	const n = 200
	for i := range n {
		seed := make([]byte, 64)
		for j := range seed {
			seed[j] = byte(i*31 + j*17)
		}
		b := schemagen.Encode(g.Generate("media-buy/get-products-request.json", schemagen.NewSource(seed)))
		if spectest.Check(t, "media-buy/get-products-request.json", b) == nil {
			valid++
		}
	}
	if valid < n/4 {
		t.Errorf("%d of %d generated get_products requests validate, want at least a quarter", valid, n)
	}
}

// TestMutateEncode: mutations change the document, and Encode writes the
// invalid UTF-8 no JSON encoder would.
func TestMutateEncode(t *testing.T) {
	sawInvalid, changed := false, 0
	for i := range 500 {
		src := schemagen.NewSource([]byte{byte(i), byte(i >> 3), 0xff, byte(i * 7), 0x10, byte(i * 13), 0xaa, byte(i)})
		doc := map[string]any{"brief": "coffee", "filters": map[string]any{"channels": []any{"olv"}}}
		before, _ := json.Marshal(doc)
		out := schemagen.Encode(schemagen.Mutate(doc, src, 2))
		if !bytes.Equal(before, out) {
			changed++
		}
		if !utf8.Valid(out) {
			sawInvalid = true
		}
	}
	if changed < 400 {
		t.Errorf("only %d of 500 mutated documents differ from the original", changed)
	}
	if !sawInvalid {
		t.Error("no mutation planted invalid UTF-8")
	}
}
