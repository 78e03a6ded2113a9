package agent

import (
	"fmt"
	"slices"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/requestschema"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/sanitize"
)

// taskAliases are the tools that are another task under an MCP name: the
// MCP tasks methods, served as tools.
var taskAliases = map[string]string{"tasks/get": "get_task_status", "tasks/list": "list_tasks"}

// taskOf is the AdCP task whose official request schema a tool's
// arguments must satisfy, "" for a tool that checks its own (the
// compliance controller).
func taskOf(tool string) string {
	task := tool
	if t, ok := taskAliases[tool]; ok {
		task = t
	}
	if !slices.Contains(requestschema.Tasks, task) {
		return ""
	}
	return task
}

// refuseInvalid is the door of dispatch: it checks a call's arguments
// against the official request schema of its task, at the release the call
// negotiates, and answers a request the schema refuses with the error arm,
// VALIDATION_ERROR naming each field at fault, before any tool sees it.
// A pin that cannot be served is left to the tool, which refuses it with
// VERSION_UNSUPPORTED and the supported versions (capabilities answer it
// at the default release, and are checked at that release).
func (a *Agent) refuseInvalid(t *Tool, args []byte) (Reply, bool) {
	if t.task == "" {
		return Reply{}, false
	}
	if a.requests == nil {
		return internalReply(args), true // the schemas did not compile: fail closed
	}
	pin, major, ctxRaw, _ := envelopeOf(args)
	v, err := adcp.Negotiate(pin, major)
	if err != nil {
		if t.Name != "get_adcp_capabilities" {
			return Reply{}, false
		}
		v = adcp.Default
	}
	shapes := requestschema.AsBuild
	if !v.AtLeast(3, 2) {
		shapes = requestschema.Legacy
	}
	issues := a.requests.Check(t.task, shapes, args)
	if len(issues) == 0 {
		return Reply{}, false
	}
	return failedReply(outcome.Envelope{Version: v, Context: ctxRaw}, SchemaError(issues)), true
}

// SchemaRefusal is the code of a request its task's schema refuses:
// INVALID_REQUEST, which AdCP defines as a request that "is malformed,
// missing required fields, or violates schema constraints" (VALIDATION_ERROR
// is for values and business rules beyond the schema), and which the
// tools already answered their own type checks with. Recovery correctable.
const SchemaRefusal = adcp.InvalidRequest

// SchemaError is the AdCP error for a request its schema refuses:
// SchemaRefusal with an issue for each field (its JSON Pointer, keyword
// and sentence), field set to the first one's in JSONPath-lite as
// core/error.json requires, and that issue's sentence as the message.
// Every string is the schemas' own words, screened.
func SchemaError(issues []requestschema.Issue) outcome.Error {
	e := outcome.Error{Code: SchemaRefusal}
	for _, is := range issues {
		msg, ok := baseScreen.Line(is.Message, sanitize.MaxMessage)
		if !ok {
			msg, _ = baseScreen.Line("this field is not valid", sanitize.MaxMessage)
		}
		ptr, _ := baseScreen.Line(is.Pointer, 500)
		if is.Pointer != "" && ptr.String() != is.Pointer {
			continue // a pointer the screen would change is not sent
		}
		e.Issues = append(e.Issues, outcome.Issue{Pointer: ptr, Message: msg, Keyword: is.Keyword})
	}
	if len(e.Issues) == 0 {
		e.Message, _ = baseScreen.Line("the request does not match the task's schema", sanitize.MaxMessage)
		return e
	}
	first := issues[0]
	if f := first.Field(); f != "" {
		e.Field, _ = baseScreen.Line(f, 500)
	}
	text := e.Issues[0].Message.String()
	if n := len(e.Issues) - 1; n > 0 {
		text += fmt.Sprintf(" (and %d more in issues)", n)
	}
	e.Message, _ = baseScreen.Line(text, sanitize.MaxMessage)
	return e
}
