// Package spectest validates storefront output against the official AdCP
// JSON Schemas, for tests. The schemas are read from the spec folder beside
// the repository (../shared/adcp-spec, or ADCP_SPEC_DIR); they are draft-07
// with scheme-less $ids, so every file is registered under
// https://adcontextprotocol.org + $id. The schemas use look-ahead, which Go's
// regexp lacks, so patterns are compiled with regexp2.
package spectest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Base is the URL every schema $id is resolved against.
const Base = "https://adcontextprotocol.org"

// Dir returns the adcp-spec folder. When it cannot be found the test
// fails, in CI and out of it: what the official schemas check is the
// test's behaviour, and a skip would let the suite print ok without it.
func Dir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("ADCP_SPEC_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		for _, cand := range []string{filepath.Join(d, "shared", "adcp-spec"), filepath.Join(d, "..", "shared", "adcp-spec")} {
			if st, err := os.Stat(filepath.Join(cand, "schemas")); err == nil && st.IsDir() {
				return cand
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	t.Fatalf("the AdCP spec folder was not found: the tests validate against the official schemas in ../shared/adcp-spec (a sibling of the repository's parent, or of the repository), from github.com/adcontextprotocol/adcp; put it there or set ADCP_SPEC_DIR to it (searched upwards from %s)", wd)
	return ""
}

type regexp2Re struct{ re *regexp2.Regexp }

func (r regexp2Re) MatchString(s string) bool {
	ok, err := r.re.MatchString(s)
	return err == nil && ok
}
func (r regexp2Re) String() string { return r.re.String() }

var (
	once     sync.Once
	compiler *jsonschema.Compiler
	loadErr  error
	mu       sync.Mutex
	compiled = map[string]*jsonschema.Schema{}
)

func load(dir string) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	c.AssertFormat()
	c.RegisterFormat(&jsonschema.Format{Name: "YYYYMMDD", Validate: func(any) error { return nil }})
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		re, err := regexp2.Compile(s, regexp2.ECMAScript)
		if err != nil {
			return nil, err
		}
		return regexp2Re{re}, nil
	})
	root := filepath.Join(dir, "schemas")
	loadErr = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || d.Name() == "manifest.json" {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		m, ok := doc.(map[string]any)
		if !ok {
			return nil
		}
		id, _ := m["$id"].(string)
		if id == "" {
			return nil
		}
		return c.AddResource(Base+id, doc)
	})
	compiler = c
}

// Schema returns the compiled official schema at rel, e.g.
// "media-buy/get-products-response.json".
func Schema(t testing.TB, rel string) *jsonschema.Schema {
	t.Helper()
	dir := Dir(t)
	once.Do(func() { load(dir) })
	if loadErr != nil {
		t.Fatalf("loading AdCP schemas: %v", loadErr)
	}
	mu.Lock()
	defer mu.Unlock()
	if s, ok := compiled[rel]; ok {
		return s
	}
	s, err := compiler.Compile(Base + "/schemas/" + rel)
	if err != nil {
		t.Fatalf("compiling %s: %v", rel, err)
	}
	compiled[rel] = s
	return s
}

// Validate checks payload against the schema at rel and reports every
// violation as a test error.
func Validate(t testing.TB, rel string, payload []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(payload)))
	if err != nil {
		t.Errorf("payload is not JSON: %v\n%s", err, payload)
		return
	}
	if err := Schema(t, rel).Validate(v); err != nil {
		t.Errorf("payload does not validate against %s:\n%v\npayload: %s", rel, err, payload)
	}
}

// Check reports whether payload validates against rel, without failing the
// test; for tests that expect a document to be refused.
func Check(t testing.TB, rel string, payload []byte) error {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(payload)))
	if err != nil {
		return err
	}
	return Schema(t, rel).Validate(v)
}

// GetProducts validates a get_products response against the official
// schema for its arm, selected by status first: the async arms have their
// own files, and the rejected arm is checked against both its own schema
// and the response union.
func GetProducts(t testing.TB, payload []byte) string {
	t.Helper()
	var head struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(payload, &head); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, payload)
	}
	switch head.Status {
	case "submitted":
		Validate(t, "media-buy/get-products-async-response-submitted.json", payload)
	case "rejected":
		Validate(t, "media-buy/get-products-rejected.json", payload)
		Validate(t, "media-buy/get-products-response.json", payload)
	case "completed", "failed":
		Validate(t, "media-buy/get-products-response.json", payload)
	default:
		t.Errorf("response has status %q, which is not a get_products arm", head.Status)
	}
	return head.Status
}

// mediaBuyResponses are the official response schemas of the media-buy
// tools.
var mediaBuyResponses = map[string]string{
	"sync_accounts":          "account/sync-accounts-response.json",
	"list_accounts":          "account/list-accounts-response.json",
	"sync_governance":        "account/sync-governance-response.json",
	"create_media_buy":       "media-buy/create-media-buy-response.json",
	"get_media_buys":         "media-buy/get-media-buys-response.json",
	"update_media_buy":       "media-buy/update-media-buy-response.json",
	"get_media_buy_delivery": "media-buy/get-media-buy-delivery-response.json",
}

// MediaBuy validates a media-buy tool's answer against the official schema
// of its task (and of its arm, for the submitted envelope), reporting every
// violation as a test error. It returns the decoded answer.
func MediaBuy(t testing.TB, tool string, payload []byte) map[string]any {
	t.Helper()
	m, err := CheckMediaBuy(t, tool, payload)
	if err != nil {
		t.Errorf("%v\npayload: %s", err, payload)
	}
	return m
}

// CheckMediaBuy is MediaBuy without failing the test. Answers served 3.0
// and 3.1 carry a create's or update's buy status at the root, as those
// releases define; the schemas here are 3.2's, whose root is the task
// status, so that member is checked against its release here and the rest
// against the schema.
func CheckMediaBuy(t testing.TB, tool string, payload []byte) (map[string]any, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		return nil, fmt.Errorf("%s answer is not a JSON object: %v", tool, err)
	}
	rel, ok := mediaBuyResponses[tool]
	if !ok {
		return m, fmt.Errorf("%s is not a media-buy tool", tool)
	}
	v, _ := m["adcp_version"].(string)
	if (tool == "create_media_buy" || tool == "update_media_buy") && m["media_buy_status"] != nil {
		pre32 := v == "3.0" || v == "3.1"
		if pre32 != (m["status"] == m["media_buy_status"]) {
			return m, fmt.Errorf("%s served %s has root status %v beside media_buy_status %v", tool, v, m["status"], m["media_buy_status"])
		}
		if pre32 {
			c := map[string]any{}
			for k, x := range m {
				c[k] = x
			}
			c["status"] = "completed"
			payload, _ = json.Marshal(c)
		}
	}
	if tool == "create_media_buy" && m["status"] == "submitted" {
		if err := Check(t, "media-buy/create-media-buy-async-response-submitted.json", payload); err != nil {
			return m, fmt.Errorf("%s submitted envelope: %v", tool, err)
		}
	}
	if err := Check(t, rel, payload); err != nil {
		return m, fmt.Errorf("%s answer does not validate against %s:\n%v", tool, rel, err)
	}
	return m, nil
}
