package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/products"
)

const controllerSchema = `{
  "type": "object",
  "description": "comply_test_controller request (sandbox only): scenario, params, and an account with sandbox: true.",
  "properties": {
    "scenario": {"type": "string"},
    "params": {"type": "object"},
    "account": {"type": "object", "properties": {"sandbox": {"type": "boolean"}}},
    "context": {"type": "object"}
  },
  "required": ["scenario", "account"],
  "additionalProperties": true
}`

func (a *Agent) controllerTool() *Tool {
	return &Tool{
		Name: "comply_test_controller",
		Description: "Sandbox-only compliance controller: list_scenarios and " + strings.Join(compliance.Scenarios(), ", ") +
			". Forced arms are one-shot for this account and credentials. Requires a sandbox test-kit key and account.sandbox: true.",
		InputSchema: json.RawMessage(controllerSchema),
		handle: func(ctx context.Context, c Call, p products.Principal, authErr error) Reply {
			if authErr != nil {
				// A caller whose credentials fail is not a sandbox caller.
				p = products.Principal{}
			}
			payload, failed := a.Controller.Handle(ctx, c.Publisher, p, c.Args)
			return Reply{Payload: payload, Failed: failed}
		},
	}
}
