package spectest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Tool is a task's entry in the release manifest (schemas/manifest.json):
// its request and response schemas.
type Tool struct {
	Request  string   `json:"request_schema"`
	Response string   `json:"response_schema"`
	Async    []string `json:"async_response_schemas"`
	// Idempotency is "required", "optional" or "none".
	Idempotency string `json:"idempotency_requirement"`
}

var (
	manifestOnce sync.Once
	manifest     map[string]Tool
	manifestErr  error
)

// aliases are the storefront's tools that are another task under an MCP
// name: MCP's tasks methods, served as tools.
var aliases = map[string]string{"tasks/get": "get_task_status", "tasks/list": "list_tasks"}

// ToolOf returns the manifest entry of tool (or of the task it is an alias
// of), failing the test when the manifest has none.
func ToolOf(t testing.TB, tool string) Tool {
	t.Helper()
	dir := Dir(t)
	manifestOnce.Do(func() {
		b, err := os.ReadFile(filepath.Join(dir, "schemas", "manifest.json"))
		if err != nil {
			manifestErr = err
			return
		}
		var m struct {
			Tools map[string]Tool `json:"tools"`
		}
		manifestErr = json.Unmarshal(b, &m)
		manifest = m.Tools
	})
	if manifestErr != nil {
		t.Fatalf("reading the AdCP release manifest: %v", manifestErr)
	}
	name := tool
	if a, ok := aliases[tool]; ok {
		name = a
	}
	e, ok := manifest[name]
	if !ok {
		t.Fatalf("the AdCP release manifest has no task %q: map the tool to its task", tool)
	}
	return e
}

// Arms are the statuses an AdCP answer may have: its task finished
// (completed), declined (rejected), failed, or waits (submitted).
var Arms = map[string]bool{"completed": true, "rejected": true, "failed": true, "submitted": true}

// Answer checks that payload is one of tool's defined answers: a JSON
// object whose status is one of Arms and that validates against the
// official schema of its arm (the task's submitted schema for submitted,
// its response schema otherwise). A failed answer of a task whose schema
// has no error arm is defined by AdCP's transport error mapping instead:
// its adcp_error and each of its errors must be error objects
// (core/error.json). As in MediaBuy, a create or update served 3.0 or 3.1
// carries the buy's status at its root, as those releases define. It
// returns the status, and an error saying what is wrong; it never fails
// the test itself.
func Answer(t testing.TB, tool string, payload []byte) (string, error) {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil || m == nil {
		return "", fmt.Errorf("the answer is not a JSON object: %.200s", payload)
	}
	status, _ := m["status"].(string)
	version, _ := m["adcp_version"].(string)
	name := tool
	if a, ok := aliases[tool]; ok {
		name = a
	}
	if buy, _ := m["media_buy_status"].(string); (name == "create_media_buy" || name == "update_media_buy") &&
		(version == "3.0" || version == "3.1") && status == buy && buy != "" {
		m["status"], status = "completed", "completed"
		payload, _ = json.Marshal(m)
	}
	if !Arms[status] {
		return status, fmt.Errorf("status %q is not an arm (completed, rejected, failed or submitted)", status)
	}
	e := ToolOf(t, tool)
	rel := e.Response
	if status == "submitted" {
		for _, a := range e.Async {
			if strings.HasSuffix(a, "-submitted.json") {
				rel = a
			}
		}
	}
	err := Check(t, rel, payload)
	if err != nil && status == "failed" {
		if ferr := failedArm(t, m); ferr == nil {
			return status, nil
		}
	}
	if err != nil {
		return status, fmt.Errorf("does not validate against %s: %v", rel, err)
	}
	return status, nil
}

// failedArm checks a failed answer as the transport error mapping reads
// it: an adcp_error, and errors if present, of error objects.
func failedArm(t testing.TB, m map[string]any) error {
	t.Helper()
	e, ok := m["adcp_error"]
	if !ok {
		return fmt.Errorf("a failed answer without adcp_error")
	}
	objs := []any{e}
	if list, ok := m["errors"].([]any); ok {
		objs = append(objs, list...)
	}
	for _, o := range objs {
		b, _ := json.Marshal(o)
		if err := Check(t, "core/error.json", b); err != nil {
			return err
		}
	}
	return nil
}

// Cause is the first leaf violations of a schema validation error, on
// one line, for grouping failures by what is wrong.
func Cause(err error) string {
	var out []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "- at ") && !strings.Contains(l, "failed") {
			out = append(out, strings.TrimPrefix(l, "- at "))
		}
		if len(out) == 2 {
			break
		}
	}
	if len(out) == 0 {
		return err.Error()
	}
	return strings.Join(out, "; ")
}
