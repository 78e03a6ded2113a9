package agent

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/requestschema"
	"github.com/storefront/storefront/jsonfield"
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
	if !requestschema.Embedded(task) {
		return ""
	}
	return task
}

// refuseInvalid is the door of dispatch: it answers a call whose
// arguments their task's official request schema refuses (SchemaIssues)
// with the error arm (SchemaError) naming each field at fault, before any
// tool sees it, and so before idempotency, the ledger or a directive.
func (a *Agent) refuseInvalid(t *Tool, c *Call) (Reply, bool) {
	if t.task == "" {
		return Reply{}, false
	}
	args := c.Args
	if c.Doc == nil && len(bytes.TrimSpace(args)) > 0 {
		if d, err := jsonfield.Parse(args); err == nil {
			c.Doc = &d
		}
	}
	issues, env, err := schemaIssues(t.Name, args, c.Doc)
	if err != nil {
		return internalReply(args), true // the schemas did not compile: fail closed
	}
	if len(issues) == 0 {
		return Reply{}, false
	}
	return failedReply(env, SchemaError(issues)), true
}

// SchemaIssues checks the arguments of a call of tool as the door of
// dispatch does, for every caller that must refuse what a buyer's call
// would be refused for (the admin preview): against the official request
// schema of the tool's task, at the release the arguments negotiate (3.2
// pre-releases as built, 3.0 and 3.1 with the shapes those releases allow,
// requestschema.Legacy). It returns what is wrong, nil for a tool that
// checks its own arguments and for a pin that cannot be served (the tool
// refuses it with VERSION_UNSUPPORTED and the supported versions; the
// capabilities, which answer it at the default release, are checked at
// that release), and the envelope of an answer. The error is the
// embedded schemas' failing to compile, a broken build.
func SchemaIssues(tool string, args []byte) ([]requestschema.Issue, outcome.Envelope, error) {
	return schemaIssues(tool, args, nil)
}

// schemaIssues is SchemaIssues of args that doc, when not nil, is
// jsonfield.Parse's reading of.
func schemaIssues(tool string, args []byte, doc *jsonfield.Value) ([]requestschema.Issue, outcome.Envelope, error) {
	var pin string
	var major int
	var ctxRaw json.RawMessage
	if doc != nil {
		pin, major, ctxRaw, _ = parsedEnvelopeOf(*doc)
	} else {
		pin, major, ctxRaw, _ = envelopeOf(args)
	}
	v, err := adcp.Negotiate(pin, major)
	env := outcome.Envelope{Version: v, Context: ctxRaw}
	task := taskOf(tool)
	if task == "" {
		return nil, env, nil
	}
	if err != nil {
		if tool != "get_adcp_capabilities" {
			return nil, env, nil
		}
		env.Version = adcp.Default()
	}
	set, err := requestschema.Official()
	if err != nil {
		return nil, env, err
	}
	shapes := requestschema.AsBuild
	if !env.Version.AtLeast(3, 2) {
		shapes = requestschema.Legacy
	}
	if doc != nil {
		return set.CheckParsed(task, shapes, args, *doc), env, nil
	}
	return set.Check(task, shapes, args), env, nil
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
	var kept []requestschema.Issue
	for _, is := range issues {
		msg, ok := sanitize.Vendor().Line(is.Message, sanitize.MaxMessage)
		if !ok {
			msg = sanitize.Const("this field is not valid")
		}
		ptr, _ := sanitize.Vendor().Line(is.Pointer, 500)
		if is.Pointer != "" && ptr.String() != is.Pointer {
			continue // a pointer the screen would change is not sent
		}
		e.Issues = append(e.Issues, outcome.Issue{Pointer: ptr, Message: msg, Keyword: is.Keyword})
		kept = append(kept, is)
	}
	if len(e.Issues) == 0 {
		e.Message = sanitize.Const("the request does not match the task's schema")
		return e
	}
	if f := kept[0].Field(); f != "" {
		e.Field, _ = sanitize.Vendor().Line(f, 500)
	}
	text := e.Issues[0].Message.String()
	if n := len(e.Issues) - 1; n > 0 {
		text += fmt.Sprintf(" (and %d more in issues)", n)
	}
	e.Message, _ = sanitize.Vendor().Line(text, sanitize.MaxMessage)
	return e
}
