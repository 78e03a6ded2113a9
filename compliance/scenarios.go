package compliance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

// param reads params[name] into v; absent is (false, nil).
func param(req *Request, name string, v any) (bool, *failure) {
	raw, ok := req.Params[name]
	if !ok || isNull(raw) {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fail(InvalidParams, "params.%s has the wrong type", name)
	}
	return true, nil
}

func forbidden(req *Request, arm string, names ...string) *failure {
	for _, n := range names {
		if raw, ok := req.Params[n]; ok && !isNull(raw) {
			return fail(InvalidParams, "params.%s is not allowed with arm %q", n, arm)
		}
	}
	return nil
}

// forceArm registers a one-shot directive for (account, principal). A
// second directive replaces the first.
func (c *Controller) forceArm(ctx context.Context, publisher string, p products.Principal, account string, req *Request) (reply, *failure) {
	var arm string
	if ok, f := param(req, "arm", &arm); f != nil {
		return nil, f
	} else if !ok {
		return nil, fail(InvalidParams, "params.arm is required (rejected or submitted)")
	}
	d := products.Directive{Arm: arm}
	echo := forced{Arm: arm}
	switch arm {
	case "rejected":
		if f := forbidden(req, arm, "task_id", "message"); f != nil {
			return nil, f
		}
		if !req.Version.AtLeast(3, 2) {
			return nil, fail(InvalidParams, "arm rejected exists only in AdCP 3.2; this request is served %s (pin adcp_version to a 3.2 release, such as %s)", req.Version, adcp.Supported()[len(adcp.Supported())-1])
		}
		if ok, f := param(req, "reason", &d.Reason); f != nil {
			return nil, f
		} else if !ok || d.Reason == "" {
			return nil, fail(InvalidParams, "params.reason is required with arm rejected")
		}
		if n := utf8.RuneCountInString(d.Reason); n > sanitize.MaxReason {
			return nil, fail(InvalidParams, "params.reason is %d characters; the limit is %d", n, sanitize.MaxReason)
		}
		if ok, f := param(req, "suggestions", &d.Suggestions); f != nil {
			return nil, f
		} else if ok {
			if len(d.Suggestions) < 1 || len(d.Suggestions) > sanitize.MaxSuggestions {
				return nil, fail(InvalidParams, "params.suggestions must hold 1 to %d items", sanitize.MaxSuggestions)
			}
			for i, s := range d.Suggestions {
				if s == "" || utf8.RuneCountInString(s) > sanitize.MaxSuggestion {
					return nil, fail(InvalidParams, "params.suggestions[%d] must be 1 to %d characters", i, sanitize.MaxSuggestion)
				}
			}
		}
		// Echo what the buyer will receive: its own words cleaned of
		// markup and vendor names, as get_products serves them. They are
		// never matched against the publisher's deny-list: the echo would
		// confirm every secret the caller typed.
		reason := sanitize.Vendor().Prose(d.Reason, sanitize.MaxReason, sanitize.Declined)
		echo.Reason = &reason
		if len(d.Suggestions) > 0 {
			suggestions := sanitize.Vendor().Lines(d.Suggestions, sanitize.MaxSuggestion, sanitize.MaxSuggestions)
			echo.Suggestions = &suggestions
		}
	case "submitted":
		if f := forbidden(req, arm, "reason", "suggestions"); f != nil {
			return nil, f
		}
		if f := submittedParams(req, &d); f != nil {
			return nil, f
		}
		echo.TaskID = d.TaskID
	case "input-required":
		return nil, fail(InvalidParams, "arm input-required is not offered for get_products by this seller")
	default:
		return nil, fail(InvalidParams, "params.arm must be rejected or submitted")
	}
	if p.Sandbox {
		// A test-kit principal has one sandbox: its directive applies to
		// its next call whatever account that call names.
		account = ""
	}
	if err := c.Store.SetDirective(ctx, publisher, account, p.ID, d); err != nil {
		c.Log.Error("storing a directive failed", "err", err)
		return nil, fail(InternalError, "the directive could not be stored")
	}
	return &forcedArm{Success: true, Forced: echo, Message: d.Message}, nil
}

// submittedParams reads a submitted arm's task_id and message.
func submittedParams(req *Request, d *products.Directive) *failure {
	if ok, f := param(req, "task_id", &d.TaskID); f != nil {
		return f
	} else if !ok || d.TaskID == "" || len(d.TaskID) > 128 {
		return fail(InvalidParams, "params.task_id is required with arm submitted (1 to 128 characters)")
	}
	if _, f := param(req, "message", &d.Message); f != nil {
		return f
	}
	if utf8.RuneCountInString(d.Message) > 2000 {
		return fail(InvalidParams, "params.message is longer than 2000 characters")
	}
	return nil
}

// forceStale simulates an unavailable upstream for the caller's next
// get_products: it is answered from the cached snapshot with a
// STALE_RESPONSE advisory. Like every directive it is one-shot, so the
// call after it sees a healthy upstream again.
func (c *Controller) forceStale(ctx context.Context, publisher string, p products.Principal, account string, req *Request) (reply, *failure) {
	var tool, upstream string
	if ok, f := param(req, "tool", &tool); f != nil {
		return nil, f
	} else if !ok {
		return nil, fail(InvalidParams, "params.tool is required")
	}
	if tool != "get_products" {
		return nil, fail(InvalidParams, "params.tool must be get_products: no other tool of this seller reads an upstream")
	}
	if _, f := param(req, "upstream_name", &upstream); f != nil {
		return nil, f
	}
	if p.Sandbox {
		account = ""
	}
	if err := c.Store.SetDirective(ctx, publisher, account, p.ID, products.Directive{Arm: "stale"}); err != nil {
		return nil, fail(InternalError, "the directive could not be stored")
	}
	return &said{Success: true, Message: "The next get_products is served from cache with a STALE_RESPONSE advisory."}, nil
}

// completeTask moves a submitted task to its terminal state with the
// given result and delivers the terminal webhook.
func (c *Controller) completeTask(ctx context.Context, publisher string, p products.Principal, account string, req *Request) (reply, *failure) {
	var id string
	if ok, f := param(req, "task_id", &id); f != nil {
		return nil, f
	} else if !ok || id == "" {
		return nil, fail(InvalidParams, "params.task_id is required")
	}
	raw, ok := req.Params["result"]
	if !ok || isNull(raw) {
		return nil, fail(InvalidParams, "params.result is required")
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > maxResultBytes {
		return nil, fail(InvalidParams, "params.result is larger than 256 KiB")
	}
	if sanitize.Vendor().Names(string(raw)) {
		// The result is delivered verbatim, so it cannot be screened
		// sentence by sentence; refuse it instead. It is the caller's own
		// text, so only vendor names count: refusing it for naming a
		// publisher's secret would confirm the secret.
		return nil, fail(InvalidParams, "params.result names an ad-technology vendor, which this seller's answers never carry")
	}
	t, f := c.findTask(ctx, publisher, p, account, id)
	if f != nil {
		return nil, f
	}
	owner := t.Owner
	var status string
	switch t.Type {
	case "get_products":
		status, f = checkResult(raw)
	case "create_media_buy":
		status, f = checkBuyResult(raw)
	default:
		return nil, fail(InvalidParams, "task %q is a %s task, which the controller does not complete", id, t.Type)
	}
	if f != nil {
		return nil, f
	}
	previous := t.Status
	t, err := c.Store.FinishTask(ctx, publisher, owner, id, status, raw, c.now())
	if errors.Is(err, store.ErrConflict) {
		return nil, &failure{code: InvalidTransition, detail: "task " + id + " has already finished"}
	}
	if err != nil {
		return nil, fail(InternalError, "the task could not be finished")
	}
	if c.Webhooks != nil {
		c.Webhooks.Deliver(ctx, publisher, t)
	}
	return &transition{Success: true, PreviousState: previous, CurrentState: status}, nil
}

// findTask finds the task to complete. A test-kit principal acts in one
// sandbox whatever account its requests name, so its task is found by id
// across its accounts (the newest unfinished one); anyone else names the
// account the task belongs to.
func (c *Controller) findTask(ctx context.Context, publisher string, p products.Principal, account, id string) (store.Task, *failure) {
	if !p.Sandbox {
		t, err := c.Store.Task(ctx, publisher, store.TaskOwner{Account: account, Principal: p.ID}, id)
		if errors.Is(err, store.ErrNotFound) {
			return t, fail(NotFound, "no task %q for this account", id)
		}
		if err != nil {
			return t, fail(InternalError, "the task could not be read")
		}
		return t, nil
	}
	ts, err := c.Store.PrincipalTasks(ctx, publisher, p.ID, id)
	if err != nil {
		return store.Task{}, fail(InternalError, "the task could not be read")
	}
	if len(ts) == 0 {
		return store.Task{}, fail(NotFound, "no task %q for these credentials", id)
	}
	for _, t := range ts {
		if !t.Terminal() {
			return t, nil
		}
	}
	return ts[0], nil
}

// checkBuyResult checks a completion payload is a create_media_buy answer
// a submitted task can end in: the success shape (the buy issued on
// completion) or the error arm. It returns the task status it means.
func checkBuyResult(raw json.RawMessage) (string, *failure) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil || r == nil {
		return "", fail(InvalidParams, "params.result must be a create_media_buy response object")
	}
	has := func(k string) bool { v, ok := r[k]; return ok && !isNull(v) }
	if has("errors") {
		var errs []json.RawMessage
		if err := json.Unmarshal(r["errors"], &errs); err != nil || len(errs) == 0 || has("media_buy_id") || has("packages") {
			return "", fail(InvalidParams, "params.result.errors must be a non-empty array, without media_buy_id or packages")
		}
		return "failed", nil
	}
	var id string
	var pkgs []struct {
		PackageID string `json:"package_id"`
	}
	var revision int
	if json.Unmarshal(r["media_buy_id"], &id) != nil || id == "" {
		return "", fail(InvalidParams, "params.result.media_buy_id is required for a completed create_media_buy")
	}
	if json.Unmarshal(r["packages"], &pkgs) != nil || pkgs == nil {
		return "", fail(InvalidParams, "params.result.packages must be an array of packages")
	}
	for i, p := range pkgs {
		if p.PackageID == "" {
			return "", fail(InvalidParams, "params.result.packages[%d].package_id is required", i)
		}
	}
	if json.Unmarshal(r["revision"], &revision) != nil || revision < 1 || !has("confirmed_at") {
		return "", fail(InvalidParams, "params.result needs revision (1 or more) and confirmed_at")
	}
	return "completed", nil
}

// checkResult checks a completion payload is a get_products response arm
// a submitted task can end in, and returns its status.
func checkResult(raw json.RawMessage) (string, *failure) {
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil || r == nil {
		return "", fail(InvalidParams, "params.result must be a get_products response object")
	}
	var status string
	if err := json.Unmarshal(r["status"], &status); err != nil {
		return "", fail(InvalidParams, "params.result.status is required")
	}
	has := func(k string) bool { v, ok := r[k]; return ok && !isNull(v) }
	switch status {
	case "completed":
		var ps []json.RawMessage
		if err := json.Unmarshal(r["products"], &ps); err != nil || ps == nil {
			return "", fail(InvalidParams, "params.result.products must be an array for a completed result")
		}
		var scope string
		if err := json.Unmarshal(r["cache_scope"], &scope); err != nil || (scope != "public" && scope != "account") {
			return "", fail(InvalidParams, "params.result.cache_scope must be public or account for a completed result")
		}
	case "rejected":
		var reason string
		if err := json.Unmarshal(r["reason"], &reason); err != nil || reason == "" || utf8.RuneCountInString(reason) > sanitize.MaxReason {
			return "", fail(InvalidParams, "params.result.reason must be 1 to 2000 characters for a rejected result")
		}
		for _, k := range []string{"products", "proposals", "errors", "adcp_error", "cache_scope", "pagination"} {
			if has(k) {
				return "", fail(InvalidParams, "params.result.%s is not allowed in a rejected result", k)
			}
		}
	case "failed":
		var errs []json.RawMessage
		if err := json.Unmarshal(r["errors"], &errs); err != nil || len(errs) == 0 {
			return "", fail(InvalidParams, "params.result.errors must be a non-empty array for a failed result")
		}
	default:
		return "", fail(InvalidParams, "params.result.status must be completed, rejected or failed")
	}
	return status, nil
}
