// Package schemas generates and publishes the JSON Schemas this project
// owns: the rulebook document publishers write, the get_products response
// union the storefront sends, and the decline vocabulary. They are
// generated from the Go types with invopop/jsonschema; the committed files
// are embedded in the binary, and a golden test fails when they drift from
// what the Go source generates (`go test ./schemas -update` rewrites them).
package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"reflect"

	"github.com/invopop/jsonschema"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/vocab"
)

// Published holds the committed schema files.
//
//go:embed *.json
var Published embed.FS

// Base is the $id prefix of the published schemas.
const Base = "https://storefront.github.io/schemas/"

// Files maps each published file to its generator.
var Files = map[string]func(commentsFrom string) ([]byte, error){
	"rulebook.schema.json":              Rulebook,
	"get-products-response.schema.json": GetProductsResponse,
	"decline-vocabulary.json":           Vocabulary,
}

// reflector maps the domain's string types onto their schemas, so the
// domain packages need not know about JSON Schema. commentsFrom, when not
// empty, is the path of the module root, whose Go doc comments become
// descriptions.
func reflector(commentsFrom string) *jsonschema.Reflector {
	r := &jsonschema.Reflector{
		RequiredFromJSONSchemaTags: false,
		DoNotReference:             false,
		Mapper:                     mapper,
	}
	if commentsFrom != "" {
		for _, pkg := range []string{"merch", "vocab", "outcome", "adcp"} {
			_ = r.AddGoComments("github.com/storefront/storefront/schemas", commentsFrom+"/"+pkg)
		}
	}
	return r
}

func strs[T ~string](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

func mapper(t reflect.Type) *jsonschema.Schema {
	switch t {
	case reflect.TypeOf(adcp.Date{}):
		return &jsonschema.Schema{Type: "string", Format: "date", Description: "A calendar date, YYYY-MM-DD."}
	case reflect.TypeOf(vocab.Level(0)):
		return &jsonschema.Schema{Type: "string", Enum: strs(vocab.Levels()), Description: "Disclosure level: how much a buyer may learn about the decline."}
	case reflect.TypeOf(vocab.Slug("")):
		return &jsonschema.Schema{Type: "string", Enum: strs(vocab.Slugs()), Description: "A published decline slug."}
	case reflect.TypeOf(vocab.SuggestionKind("")):
		return &jsonschema.Schema{Type: "string", Enum: strs(vocab.SuggestionKinds())}
	case reflect.TypeOf(vocab.Tone("")):
		return &jsonschema.Schema{Type: "string", Enum: strs(vocab.Tones())}
	case reflect.TypeOf(sanitize.Text{}):
		return &jsonschema.Schema{Type: "string", Description: "Buyer-visible plain text that passed the storefront's screen."}
	case reflect.TypeOf(adcp.Code("")):
		return &jsonschema.Schema{Type: "string", Description: "An AdCP error code."}
	case reflect.TypeOf(json.RawMessage{}):
		return &jsonschema.Schema{}
	}
	return nil
}

func encode(s *jsonschema.Schema) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Rulebook is the schema of the rulebook document.
func Rulebook(commentsFrom string) ([]byte, error) {
	r := reflector(commentsFrom)
	s := r.Reflect(&merch.Rulebook{})
	s.ID = jsonschema.ID(Base + "rulebook.schema.json")
	s.Title = "Storefront merchandising rulebook"
	s.Description = "A publisher's merchandising rulebook (format " + merch.Format + "). Rule ids, names, notes and confidential terms never reach a buyer."
	return encode(s)
}

// GetProductsResponse is the schema of what the storefront sends for
// get_products: one of four arms, told apart by status.
func GetProductsResponse(commentsFrom string) ([]byte, error) {
	r := reflector(commentsFrom)
	r.ExpandedStruct = false
	s := r.Reflect(&struct {
		Completed outcome.CompletedWire
		Rejected  outcome.RejectedWire
		Failed    outcome.FailedWire
		Submitted outcome.SubmittedWire
	}{})
	// The wrapper only collects the arm definitions; the response is one of
	// them.
	root := &jsonschema.Schema{
		Version:     jsonschema.Version,
		ID:          jsonschema.ID(Base + "get-products-response.schema.json"),
		Title:       "Storefront get_products response",
		Description: "The flat AdCP object a get_products call returns, on every transport. A subset of the official AdCP 3.2 get-products response union; the rejected arm is served to 3.2 pins only.",
		Definitions: s.Definitions,
		OneOf: []*jsonschema.Schema{
			{Ref: "#/$defs/CompletedWire"}, {Ref: "#/$defs/RejectedWire"},
			{Ref: "#/$defs/FailedWire"}, {Ref: "#/$defs/SubmittedWire"},
		},
	}
	delete(root.Definitions, "")
	return encode(root)
}

// VocabularyDoc is the published vocabulary document.
type VocabularyDoc struct {
	Schema  string        `json:"$schema"`
	ID      string        `json:"$id"`
	Title   string        `json:"title"`
	Entries []vocab.Entry `json:"entries"`
	// Levels are the disclosure levels, least revealing first.
	Levels []string `json:"disclosure_levels"`
}

// Vocabulary is the published decline vocabulary.
func Vocabulary(string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	err := enc.Encode(VocabularyDoc{
		Schema:  "https://json-schema.org/draft/2020-12/schema",
		ID:      Base + "decline-vocabulary.json",
		Title:   "Storefront decline vocabulary",
		Entries: vocab.Vocabulary(),
		Levels:  vocab.Levels(),
	})
	return b.Bytes(), err
}
