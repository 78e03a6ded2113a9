package agent

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/internal/verbatim"
	"github.com/storefront/storefront/outcome"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/sanitize"
	"github.com/storefront/storefront/store"
)

const taskStatusSchema = `{
  "type": "object",
  "description": "get_task_status request: the state of an asynchronous task, and its result once terminal.",
  "properties": {
    "task_id": {"type": "string"},
    "account": {"type": "object"},
    "include_result": {"type": "boolean"},
    "include_history": {"type": "boolean"},
    "context": {"type": "object"}
  },
  "required": ["task_id"],
  "additionalProperties": true
}`

const listTasksSchema = `{
  "type": "object",
  "description": "list_tasks request: the caller's asynchronous tasks for an account.",
  "properties": {
    "account": {"type": "object"},
    "filters": {"type": "object"},
    "pagination": {"type": "object", "properties": {"max_results": {"type": "integer"}, "cursor": {"type": "string"}}},
    "context": {"type": "object"}
  },
  "additionalProperties": true
}`

func (a *Agent) taskStatusTool(name string) *Tool {
	return &Tool{
		Name:        name,
		Description: "Read the status of an asynchronous task (a submitted get_products or create_media_buy), and its result once it has finished. Tasks are visible only to the account and credentials that created them.",
		InputSchema: json.RawMessage(taskStatusSchema),
		handle:      a.taskStatus,
	}
}

func (a *Agent) listTasksTool(name string) *Tool {
	return &Tool{
		Name:        name,
		Description: "List the caller's asynchronous tasks for an account, newest first, with filters by id, type, status and webhook.",
		InputSchema: json.RawMessage(listTasksSchema),
		handle:      a.listTasks,
	}
}

// taskRequest is what both task tools read.
type taskRequest struct {
	TaskID        string          `json:"task_id"`
	Account       json.RawMessage `json:"account"`
	IncludeResult bool            `json:"include_result"`
	Filters       struct {
		TaskIDs    []string `json:"task_ids"`
		TaskType   string   `json:"task_type"`
		TaskTypes  []string `json:"task_types"`
		Status     string   `json:"status"`
		Statuses   []string `json:"statuses"`
		HasWebhook *bool    `json:"has_webhook"`
	} `json:"filters"`
	Pagination struct {
		MaxResults int    `json:"max_results"`
		Cursor     string `json:"cursor"`
	} `json:"pagination"`
}

// owner resolves the task owner of a request: the named account (or none)
// and the principal. visible is false when the request names an account
// the caller may not use (another principal's, or none at all): the
// caller owns no task there, which is decided here, before any lookup,
// and answered as for a task that does not exist.
func (a *Agent) owner(ctx context.Context, publisher string, p products.Principal, raw json.RawMessage) (o store.TaskOwner, visible bool, failure *outcome.Error) {
	o = store.TaskOwner{Principal: p.ID}
	if len(raw) == 0 || string(raw) == "null" {
		return o, true, nil
	}
	req, err := products.DecodeRequest([]byte(`{"account":` + string(raw) + `}`))
	if err != nil || req.Account == nil {
		e := invalidField(sanitize.Const("account must be an account reference"), sanitize.Const("account"))
		return o, false, &e
	}
	acct, err := (access.Accounts{Store: a.Store}).Resolve(ctx, publisher, p, req.Account)
	if errors.Is(err, products.ErrAccountNotFound) {
		return o, false, nil
	}
	if err != nil {
		return o, false, &outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable}
	}
	o.Account = acct.Key
	return o, true, nil
}

// taskNotFound is the answer for a task the caller cannot see, whether it
// is another caller's or does not exist (REFERENCE_NOT_FOUND, as
// get-task-status-request.json requires).
func taskNotFound() outcome.Error {
	return outcome.Error{Code: adcp.ReferenceNotFound, Message: sanitize.Const("no such task for this account and these credentials"), Field: sanitize.Const("task_id")}
}

// textRefusal is the answer for a task request holding text no task reads
// (products.TextProblems), or nil.
func textRefusal(args []byte) *outcome.Error {
	ps := products.TextProblems(args, true)
	if len(ps) == 0 {
		return nil
	}
	e := outcome.Error{Code: ps[0].Code}
	e.Message, _ = sanitize.Vendor().Line(ps[0].Detail, sanitize.MaxMessage)
	e.Field, _ = sanitize.Vendor().Line(ps[0].Path, 200)
	return &e
}

func (a *Agent) taskEnvelope(args []byte) (outcome.Envelope, bool) {
	pin, major, ctxRaw, ok := envelopeOf(args)
	v, err := adcp.Negotiate(pin, major)
	if err != nil {
		v = adcp.Default()
	}
	return outcome.Envelope{Version: v, Context: ctxRaw}, ok
}

func failedReply(env outcome.Envelope, e outcome.Error) Reply {
	return reply(outcome.NewFailed(env, e))
}

func (a *Agent) taskStatus(ctx context.Context, c Call, p products.Principal, authErr error) Reply {
	env, ok := a.taskEnvelope(c.Args)
	if authErr != nil {
		return reply(authFailure(env, authErr))
	}
	var req taskRequest
	if !ok || (len(c.Args) > 0 && json.Unmarshal(c.Args, &req) != nil) {
		return failedReply(env, invalidField(sanitize.Const("the request is not a valid get_task_status request (task_id must be a string)"), sanitize.Text{}))
	}
	if e := textRefusal(c.Args); e != nil {
		return failedReply(env, *e)
	}
	if req.TaskID == "" {
		return failedReply(env, invalidField(sanitize.Const("task_id is required"), sanitize.Const("task_id")))
	}
	owner, visible, e := a.owner(ctx, c.Publisher, p, req.Account)
	if e != nil {
		return failedReply(env, *e)
	}
	if !visible {
		return failedReply(env, taskNotFound())
	}
	t, err := a.Store.Task(ctx, c.Publisher, owner, req.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		// The same answer whether the task is another caller's or does
		// not exist.
		return failedReply(env, taskNotFound())
	}
	if err != nil {
		return failedReply(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
	}
	w := taskStatusWire{
		Status: t.Status, AdcpVersion: env.Version.String(),
		TaskID: t.ID, TaskType: t.Type, Protocol: "media-buy",
		CreatedAt: stamp(t.CreatedAt), UpdatedAt: stamp(t.UpdatedAt),
		HasWebhook: t.Webhook != nil,
	}
	if t.CompletedAt != nil {
		w.CompletedAt = stamp(*t.CompletedAt)
	}
	if t.Message != "" && !t.Terminal() {
		if m, ok := sanitize.Vendor().Line(t.Message, 2000); ok {
			w.Message = &m
		}
	}
	if t.Status == "failed" {
		if e, ok := failureOf(t.Result); ok {
			w.Error = &e
		}
	}
	// The result is returned byte for byte, and the buyer's context as it
	// came.
	var result json.RawMessage
	if req.IncludeResult && t.Terminal() && len(t.Result) > 0 {
		result = t.Result
	}
	payload, err := verbatim.Marshal(w, verbatim.Member{Key: "result", Value: result}, verbatim.Member{Key: "context", Value: env.Context})
	if err != nil {
		return internalReply(c.Args)
	}
	return Reply{Payload: payload}
}

// taskStatusWire is the get_task_status response but for its result and
// context, which go out verbatim after it.
type taskStatusWire struct {
	Status      string         `json:"status"`
	AdcpVersion string         `json:"adcp_version"`
	TaskID      string         `json:"task_id"`
	TaskType    string         `json:"task_type"`
	Protocol    string         `json:"protocol"`
	CreatedAt   string         `json:"created_at"`
	UpdatedAt   string         `json:"updated_at"`
	CompletedAt string         `json:"completed_at,omitempty"`
	HasWebhook  bool           `json:"has_webhook"`
	Message     *sanitize.Text `json:"message,omitempty"`
	Error       *taskError     `json:"error,omitempty"`
}

// taskError is a failed task's error summary: the fatal error its result
// carries, member for member, so that the two always agree.
type taskError struct {
	Code       string          `json:"code"`
	Message    string          `json:"message"`
	Recovery   string          `json:"recovery,omitempty"`
	Field      string          `json:"field,omitempty"`
	Suggestion string          `json:"suggestion,omitempty"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// failureOf reads a failed result's fatal error: its adcp_error, else the
// first of its errors (a 3.0 answer, or a result the compliance controller
// supplied). A result with neither, or one whose error lacks a code or a
// message, has no summary to give.
func failureOf(result []byte) (taskError, bool) {
	var r struct {
		AdcpError *taskError  `json:"adcp_error"`
		Errors    []taskError `json:"errors"`
	}
	if json.Unmarshal(result, &r) != nil {
		return taskError{}, false
	}
	e := r.AdcpError
	if e == nil && len(r.Errors) > 0 {
		e = &r.Errors[0]
	}
	if e == nil || e.Code == "" || e.Message == "" {
		return taskError{}, false
	}
	if d := strings.TrimSpace(string(e.Details)); d != "" && d[0] != '{' {
		e.Details = nil // the summary's details must be an object
	}
	return *e, true
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// invalidField is INVALID_REQUEST with a fixed message and the field at
// fault (the zero Text for none).
func invalidField(msg, field sanitize.Text) outcome.Error {
	return outcome.Error{Code: adcp.InvalidRequest, Message: msg, Field: field}
}

func (a *Agent) listTasks(ctx context.Context, c Call, p products.Principal, authErr error) Reply {
	env, ok := a.taskEnvelope(c.Args)
	if authErr != nil {
		return reply(authFailure(env, authErr))
	}
	var req taskRequest
	if !ok || (len(c.Args) > 0 && json.Unmarshal(c.Args, &req) != nil) {
		return failedReply(env, invalidField(sanitize.Const("the request is not a valid list_tasks request (check filters and pagination types)"), sanitize.Text{}))
	}
	if e := textRefusal(c.Args); e != nil {
		return failedReply(env, *e)
	}
	owner, visible, e := a.owner(ctx, c.Publisher, p, req.Account)
	if e != nil {
		return failedReply(env, *e)
	}
	f := store.TaskFilter{IDs: req.Filters.TaskIDs, HasWebhook: req.Filters.HasWebhook}
	var applied []string
	if len(f.IDs) > 0 {
		applied = append(applied, "task_ids")
	}
	switch {
	case req.Filters.TaskType != "":
		f.Type = req.Filters.TaskType
		applied = append(applied, "task_type")
	case len(req.Filters.TaskTypes) == 1:
		f.Type = req.Filters.TaskTypes[0]
		applied = append(applied, "task_types")
	case len(req.Filters.TaskTypes) > 1:
		return failedReply(env, invalidField(sanitize.Const("filters.task_types: this seller has only get_products tasks; filter by one type"), sanitize.Const("filters.task_types")))
	}
	f.Statuses = req.Filters.Statuses
	if req.Filters.Status != "" {
		f.Statuses = append(f.Statuses, req.Filters.Status)
	}
	if len(f.Statuses) > 0 {
		applied = append(applied, "statuses")
	}
	if f.HasWebhook != nil {
		applied = append(applied, "has_webhook")
	}
	size := req.Pagination.MaxResults
	if size == 0 {
		size = 50
	}
	if size < 1 || size > 100 {
		return failedReply(env, invalidField(sanitize.Const("pagination.max_results must be between 1 and 100"), sanitize.Const("pagination.max_results")))
	}
	if req.Pagination.Cursor != "" {
		off, err := decodeOffset(req.Pagination.Cursor)
		if err != nil {
			return failedReply(env, invalidField(sanitize.Const("pagination.cursor is not a cursor this seller issued"), sanitize.Const("pagination.cursor")))
		}
		f.Offset = off
	}
	f.Limit = size
	var tasks []store.Task
	total := 0
	if visible {
		// An account the caller may not use holds none of its tasks: an
		// empty list, as for an account without any.
		var err error
		if tasks, total, err = a.Store.ListTasks(ctx, c.Publisher, owner, f); err != nil {
			return failedReply(env, outcome.Error{Code: adcp.ServiceUnavailable, Message: sanitize.Unavailable})
		}
	}
	items := make([]taskItem, 0, len(tasks))
	for _, t := range tasks {
		item := taskItem{
			TaskID: t.ID, TaskType: t.Type, Domain: "media-buy", Status: t.Status,
			CreatedAt: stamp(t.CreatedAt), UpdatedAt: stamp(t.UpdatedAt), HasWebhook: t.Webhook != nil,
		}
		if t.CompletedAt != nil {
			item.CompletedAt = stamp(*t.CompletedAt)
		}
		items = append(items, item)
	}
	page := taskPage{HasMore: f.Offset+len(tasks) < total, TotalCount: total}
	if f.Offset+len(tasks) < total {
		page.Cursor = encodeOffset(f.Offset + len(tasks))
	}
	if applied == nil {
		applied = []string{}
	}
	w := taskListWire{
		Status: "completed", AdcpVersion: env.Version.String(),
		QuerySummary: querySummary{
			TotalMatching: total, Returned: len(tasks), FiltersApplied: applied,
			SortApplied: sortApplied{Field: "created_at", Direction: "desc"},
		},
		Tasks: items, Pagination: page,
	}
	payload, err := verbatim.Marshal(w, verbatim.Member{Key: "context", Value: env.Context})
	if err != nil {
		return internalReply(c.Args)
	}
	return Reply{Payload: payload}
}

// taskListWire is the list_tasks response but for its context, which goes
// out verbatim after it. The objects below it were first written from
// maps, so their members are in the order of their names.
type taskListWire struct {
	Status       string       `json:"status"`
	AdcpVersion  string       `json:"adcp_version"`
	QuerySummary querySummary `json:"query_summary"`
	Tasks        []taskItem   `json:"tasks"`
	Pagination   taskPage     `json:"pagination"`
}

type querySummary struct {
	FiltersApplied []string    `json:"filters_applied"`
	Returned       int         `json:"returned"`
	SortApplied    sortApplied `json:"sort_applied"`
	TotalMatching  int         `json:"total_matching"`
}

type sortApplied struct {
	Direction string `json:"direction"`
	Field     string `json:"field"`
}

type taskItem struct {
	CompletedAt string `json:"completed_at,omitempty"`
	CreatedAt   string `json:"created_at"`
	Domain      string `json:"domain"`
	HasWebhook  bool   `json:"has_webhook"`
	Status      string `json:"status"`
	TaskID      string `json:"task_id"`
	TaskType    string `json:"task_type"`
	UpdatedAt   string `json:"updated_at"`
}

type taskPage struct {
	Cursor     string `json:"cursor,omitempty"`
	HasMore    bool   `json:"has_more"`
	TotalCount int    `json:"total_count"`
}

func encodeOffset(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("tasks:" + strconv.Itoa(n)))
}

func decodeOffset(s string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 7 || string(b[:6]) != "tasks:" {
		return 0, errors.New("bad cursor")
	}
	return strconv.Atoi(string(b[6:]))
}
