package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/storefront/storefront/store"
)

// Task owners: owner, and two who share half of its identity.
var (
	owner         = store.TaskOwner{Account: "acct_1", Principal: "buyer"}
	samePrincipal = store.TaskOwner{Account: "acct_2", Principal: "buyer"}
	sameAccount   = store.TaskOwner{Account: "acct_1", Principal: "other-buyer"}
)

// taskOpts compare tasks: empty and nil bodies alike, and times by
// instant (cmp uses time.Time.Equal).
var taskOpts = cmp.Options{cmpopts.EquateEmpty()}

// ignoreTaskTimes leaves the store-assigned times out of a comparison.
var ignoreTaskTimes = cmpopts.IgnoreFields(store.Task{}, "CreatedAt", "UpdatedAt")

// at is a fixed instant with microseconds, in a zone other than UTC.
func at(minute int) time.Time {
	return time.Date(2031, 3, 4, 5, minute, 7, 123456000, time.FixedZone("CET", 3600))
}

func getTask(t *testing.T, s store.Store, publisher string, o store.TaskOwner, id string) store.Task {
	t.Helper()
	got, err := s.Task(t.Context(), publisher, o, id)
	wantErr(t, fmt.Sprintf("Task(%q, %+v, %q)", publisher, o, id), err, nil)
	return got
}

// wantUTC fails unless every time of the task is in UTC.
func wantUTC(t *testing.T, what string, task store.Task) {
	t.Helper()
	times := map[string]time.Time{"CreatedAt": task.CreatedAt, "UpdatedAt": task.UpdatedAt, "Delivery.Timestamp": task.Delivery.Timestamp}
	if task.CompletedAt != nil {
		times["CompletedAt"] = *task.CompletedAt
	}
	if task.Delivery.DeliveredAt != nil {
		times["Delivery.DeliveredAt"] = *task.Delivery.DeliveredAt
	}
	for name, tm := range times {
		if tm.Location() != time.UTC {
			t.Errorf("%s: %s = %v, want UTC", what, name, tm)
		}
	}
}

func newTask(id string, o store.TaskOwner, typ, status string, webhook bool) store.Task {
	task := store.Task{ID: id, Owner: o, Type: typ, Status: status,
		Request: fmt.Appendf(nil, `{"brief":"task %s","z":1,"a":2}`, id)}
	if webhook {
		task.Webhook = &store.Webhook{URL: "https://buyer.example/hooks/" + id, OperationID: "op-" + id}
	}
	return task
}

func createTask(t *testing.T, s store.Store, publisher string, task store.Task) {
	t.Helper()
	wantErr(t, fmt.Sprintf("CreateTask(%q, %+v, %q)", publisher, task.Owner, task.ID), s.CreateTask(t.Context(), publisher, task), nil)
}

// testTasks walks a task through its life, and checks that it is its
// owner's alone: the same id under another owner is another task.
func testTasks(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	request := []byte(`{"brief":"Premium vidéo 🎬 for «Q3»","filters":{"z":1,"a":[2,1]},"x":null}`)
	task := store.Task{ID: "task_1", Owner: owner, Type: "get_products", Status: "submitted", Message: "queued",
		Request: bytes.Clone(request),
		Webhook: &store.Webhook{URL: "https://buyer.example/hook", OperationID: "op-1", Token: "client-token-0123456789",
			Scheme: "HMAC-SHA256", Credentials: "a-shared-secret-of-at-least-32-bytes"}}
	start := now(t, s)
	createTask(t, s, alpha.ID, task)
	end := now(t, s)
	task.Request[0] = 'X' // the store kept its own copy
	task.Request = request

	got := getTask(t, s, alpha.ID, owner, "task_1")
	if diff := cmp.Diff(task, got, taskOpts, ignoreTaskTimes); diff != "" {
		t.Errorf("Task(task_1) mismatch (-want +got):\n%s", diff)
	}
	if !bytes.Equal(got.Request, request) {
		t.Errorf("Task(task_1).Request = %q, want byte for byte %q", got.Request, request)
	}
	wantNear(t, "Task(task_1).CreatedAt", got.CreatedAt, start, end)
	if !got.UpdatedAt.Equal(got.CreatedAt) {
		t.Errorf("Task(task_1).UpdatedAt = %v, want CreatedAt %v", got.UpdatedAt, got.CreatedAt)
	}
	wantUTC(t, "Task(task_1)", got)
	created := got
	altered := getTask(t, s, alpha.ID, owner, "task_1")
	altered.Webhook.URL, altered.Request[0] = "https://evil.example", 'X' // nor does it share it
	if again := getTask(t, s, alpha.ID, owner, "task_1"); !cmp.Equal(created, again, taskOpts) {
		t.Errorf("Task(task_1) after the caller altered a copy = %+v, want %+v", again, created)
	}

	// The id is taken for this owner only.
	dup := newTask("task_1", owner, "create_media_buy", "working", false)
	wantErr(t, "CreateTask(the owner's id again)", s.CreateTask(ctx, alpha.ID, dup), store.ErrExists)
	if again := getTask(t, s, alpha.ID, owner, "task_1"); !cmp.Equal(created, again, taskOpts) {
		t.Errorf("Task(task_1) after a duplicate create = %+v, want it unchanged %+v", again, created)
	}
	theirs := newTask("task_1", sameAccount, "create_media_buy", "working", false)
	createTask(t, s, alpha.ID, theirs)
	if g := getTask(t, s, alpha.ID, sameAccount, "task_1"); !cmp.Equal(theirs, g, taskOpts, ignoreTaskTimes) {
		t.Errorf("Task(another principal's task_1) = %+v, want %+v", g, theirs)
	}
	for _, o := range []store.TaskOwner{samePrincipal, {Account: "acct_1"}, {Principal: "buyer"}} {
		_, err := s.Task(ctx, alpha.ID, o, "task_1")
		wantErr(t, fmt.Sprintf("Task(%+v, another owner's task_1)", o), err, store.ErrNotFound)
	}
	_, err := s.Task(ctx, alpha.ID, owner, "no-such-task")
	wantErr(t, "Task(missing)", err, store.ErrNotFound)
	_, err = s.Task(ctx, beta.ID, owner, "task_1")
	wantErr(t, "Task(beta, alpha's task)", err, store.ErrNotFound)

	// Finishing sets the status, the result and both times at once.
	result := []byte(`{"products":[{"product_id":"ctv_prime","name":"Primetime CTV — Ü"}],"z":0,"a":1}`)
	finishedAt := at(6)
	fin, err := s.FinishTask(ctx, alpha.ID, owner, "task_1", "completed", bytes.Clone(result), finishedAt)
	wantErr(t, "FinishTask(task_1)", err, nil)
	want := created
	want.Status, want.Result, want.UpdatedAt, want.CompletedAt = "completed", result, finishedAt, &finishedAt
	if diff := cmp.Diff(want, fin, taskOpts); diff != "" {
		t.Errorf("FinishTask(task_1) mismatch (-want +got):\n%s", diff)
	}
	wantUTC(t, "FinishTask(task_1)", fin)
	got = getTask(t, s, alpha.ID, owner, "task_1")
	if diff := cmp.Diff(want, got, taskOpts); diff != "" {
		t.Errorf("Task(task_1) after FinishTask mismatch (-want +got):\n%s", diff)
	}
	if !bytes.Equal(got.Result, result) {
		t.Errorf("Task(task_1).Result = %q, want byte for byte %q", got.Result, result)
	}
	wantUTC(t, "Task(task_1) after FinishTask", got)

	// Once terminal, a task stays as it finished.
	_, err = s.FinishTask(ctx, alpha.ID, owner, "task_1", "failed", []byte(`{"errors":[]}`), at(7))
	wantErr(t, "FinishTask(task_1 already completed)", err, store.ErrConflict)
	if again := getTask(t, s, alpha.ID, owner, "task_1"); !cmp.Equal(want, again, taskOpts) {
		t.Errorf("Task(task_1) after a second FinishTask = %+v, want it unchanged %+v", again, want)
	}
	// Another owner's task of the same id is not finished, nor finishable
	// by this owner's calls.
	if g := getTask(t, s, alpha.ID, sameAccount, "task_1"); g.Terminal() || g.Result != nil {
		t.Errorf("another principal's task_1 = %+v, want it untouched", g)
	}
	_, err = s.FinishTask(ctx, alpha.ID, samePrincipal, "task_1", "failed", nil, at(7))
	wantErr(t, "FinishTask(another owner's task_1)", err, store.ErrNotFound)
	_, err = s.FinishTask(ctx, alpha.ID, owner, "no-such-task", "failed", nil, at(7))
	wantErr(t, "FinishTask(missing)", err, store.ErrNotFound)
	_, err = s.FinishTask(ctx, beta.ID, owner, "task_1", "failed", nil, at(7))
	wantErr(t, "FinishTask(beta, alpha's task)", err, store.ErrNotFound)
	theirsDone, err := s.FinishTask(ctx, alpha.ID, sameAccount, "task_1", "failed", []byte(`{"errors":[{"code":"X"}]}`), at(8))
	wantErr(t, "FinishTask(another principal's task_1)", err, nil)
	if theirsDone.Status != "failed" || theirsDone.Owner != sameAccount {
		t.Errorf("FinishTask(another principal's task_1) = %+v, want theirs, failed", theirsDone)
	}

	// Every terminal status is final; a non-terminal one is not.
	for i, status := range []string{"completed", "failed", "rejected", "canceled"} {
		id := fmt.Sprintf("terminal_%d", i)
		createTask(t, s, alpha.ID, newTask(id, owner, "get_products", "working", false))
		if _, err := s.FinishTask(ctx, alpha.ID, owner, id, status, nil, at(9)); err != nil {
			t.Fatalf("FinishTask(%s, %s) = %v", id, status, err)
		}
		_, err := s.FinishTask(ctx, alpha.ID, owner, id, "completed", nil, at(10))
		wantErr(t, fmt.Sprintf("FinishTask(a task already %s)", status), err, store.ErrConflict)
	}
	// Times are kept to the microsecond, in UTC.
	createTask(t, s, alpha.ID, newTask("precise", owner, "get_products", "working", false))
	nanos := time.Date(2031, 3, 4, 5, 6, 7, 123456789, time.FixedZone("PST", -8*3600))
	fin, err = s.FinishTask(ctx, alpha.ID, owner, "precise", "completed", nil, nanos)
	wantErr(t, "FinishTask(at with nanoseconds)", err, nil)
	micros := nanos.UTC().Truncate(time.Microsecond)
	if fin.CompletedAt == nil || !fin.CompletedAt.Equal(micros) || !fin.UpdatedAt.Equal(micros) {
		t.Errorf("FinishTask(at %v) = completed %v, updated %v, want both %v", nanos, fin.CompletedAt, fin.UpdatedAt, micros)
	}
	if !fin.CreatedAt.Equal(fin.CreatedAt.Truncate(time.Microsecond)) {
		t.Errorf("Task.CreatedAt = %v, want whole microseconds", fin.CreatedAt)
	}
	wantUTC(t, "FinishTask(at with nanoseconds)", fin)
	if got := getTask(t, s, alpha.ID, owner, "precise"); !cmp.Equal(fin, got, taskOpts) {
		t.Errorf("Task(precise) = %+v, want what FinishTask returned, %+v", got, fin)
	}

	// A task created terminal cannot be finished again.
	born := newTask("born_done", owner, "get_products", "rejected", false)
	createTask(t, s, alpha.ID, born)
	_, err = s.FinishTask(ctx, alpha.ID, owner, "born_done", "completed", nil, at(10))
	wantErr(t, "FinishTask(a task created rejected)", err, store.ErrConflict)
}

// testTaskDelivery checks that RecordDelivery stores the delivery state,
// replacing the last, and touches nothing else.
func testTaskDelivery(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	task := newTask("task_1", owner, "get_products", "submitted", true)
	createTask(t, s, alpha.ID, task)
	createTask(t, s, alpha.ID, newTask("task_1", sameAccount, "get_products", "submitted", true))
	done := at(1)
	fin, err := s.FinishTask(ctx, alpha.ID, owner, "task_1", "completed", []byte(`{"products":[]}`), done)
	wantErr(t, "FinishTask", err, nil)

	first := store.Delivery{IdempotencyKey: "whk_0123456789abcdef", Timestamp: at(2), Attempts: 1, LastError: "POST: connection refused"}
	wantErr(t, "RecordDelivery(first attempt)", s.RecordDelivery(ctx, alpha.ID, owner, "task_1", first), nil)
	got := getTask(t, s, alpha.ID, owner, "task_1")
	want := fin
	want.Delivery = first
	if diff := cmp.Diff(want, got, taskOpts); diff != "" {
		t.Errorf("Task after RecordDelivery(first attempt) mismatch (-want +got):\n%s", diff)
	}
	wantUTC(t, "Task after RecordDelivery", got)

	delivered := at(3)
	second := store.Delivery{IdempotencyKey: first.IdempotencyKey, Timestamp: first.Timestamp, Attempts: 2, DeliveredAt: &delivered}
	wantErr(t, "RecordDelivery(delivered)", s.RecordDelivery(ctx, alpha.ID, owner, "task_1", second), nil)
	got = getTask(t, s, alpha.ID, owner, "task_1")
	want.Delivery = second
	if diff := cmp.Diff(want, got, taskOpts); diff != "" {
		t.Errorf("Task after RecordDelivery(delivered) mismatch (-want +got):\n%s", diff)
	}
	wantUTC(t, "Task after the second RecordDelivery", got)

	// Recording a delivery of no one's task fails; another owner's task of
	// the same id keeps its own state.
	wantErr(t, "RecordDelivery(another owner's task)", s.RecordDelivery(ctx, alpha.ID, samePrincipal, "task_1", first), store.ErrNotFound)
	wantErr(t, "RecordDelivery(missing)", s.RecordDelivery(ctx, alpha.ID, owner, "no-such-task", first), store.ErrNotFound)
	wantErr(t, "RecordDelivery(beta, alpha's task)", s.RecordDelivery(ctx, beta.ID, owner, "task_1", first), store.ErrNotFound)
	if g := getTask(t, s, alpha.ID, sameAccount, "task_1"); !cmp.Equal(g.Delivery, store.Delivery{}) {
		t.Errorf("another principal's task_1 delivery = %+v, want none", g.Delivery)
	}
}

// testFinishTaskRace checks that of several finishers of one task exactly
// one wins, and the task holds what the winner wrote.
func testFinishTaskRace(t *testing.T, s store.Store) {
	withPublishers(t, s)
	for round := range 3 {
		id := fmt.Sprintf("race_%d", round)
		createTask(t, s, alpha.ID, newTask(id, owner, "get_products", "working", round%2 == 0))
		var (
			wins    atomic.Int32
			winners = make([]*store.Task, 8)
		)
		parallel(8, func(i int) {
			status := []string{"completed", "failed", "canceled", "rejected"}[i%4]
			fin, err := s.FinishTask(t.Context(), alpha.ID, owner, id, status, fmt.Appendf(nil, `{"racer":%d}`, i), at(i))
			switch {
			case err == nil:
				wins.Add(1)
				winners[i] = &fin
			case !errors.Is(err, store.ErrConflict):
				t.Errorf("FinishTask(%s, racer %d) = %v, want nil or ErrConflict", id, i, err)
			}
		})
		if n := wins.Load(); n != 1 {
			t.Fatalf("round %d: %d of 8 concurrent FinishTask calls succeeded, want exactly 1", round, n)
		}
		i := slices.IndexFunc(winners, func(w *store.Task) bool { return w != nil })
		got := getTask(t, s, alpha.ID, owner, id)
		if diff := cmp.Diff(*winners[i], got, taskOpts); diff != "" {
			t.Errorf("round %d: the task differs from what the winner (racer %d) was told (-winner +stored):\n%s", round, i, diff)
		}
		if !bytes.Equal(got.Result, fmt.Appendf(nil, `{"racer":%d}`, i)) {
			t.Errorf("round %d: the task's result is %s, want racer %d's", round, got.Result, i)
		}
	}
}

// testListTasks checks ListTasks' filters, order and paging, and that it
// lists the owner's tasks only.
func testListTasks(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	// Created in this order, a little apart: the newest is listed first.
	tasks := []store.Task{
		newTask("t0", owner, "get_products", "submitted", true),
		newTask("t1", owner, "get_products", "working", false),
		newTask("t2", owner, "create_media_buy", "submitted", true),
		newTask("t3", owner, "get_products", "submitted", false),
		newTask("t4", owner, "get_products", "submitted", true),
		newTask("t5", owner, "create_media_buy", "working", false),
		newTask("t6", owner, "get_products", "submitted", true),
	}
	for _, task := range tasks {
		createTask(t, s, alpha.ID, task)
		// Tasks of the same ids under other owners, and at beta, are
		// never listed.
		for _, o := range []store.TaskOwner{sameAccount, samePrincipal} {
			createTask(t, s, alpha.ID, newTask(task.ID, o, task.Type, task.Status, true))
		}
		createTask(t, s, beta.ID, task)
		time.Sleep(2 * time.Millisecond)
	}
	createTask(t, s, alpha.ID, newTask("t7", sameAccount, "get_products", "submitted", true))
	for id, status := range map[string]string{"t3": "completed", "t4": "failed"} {
		if _, err := s.FinishTask(ctx, alpha.ID, owner, id, status, []byte(`{}`), at(0)); err != nil {
			t.Fatal(err)
		}
	}
	yes, no := true, false
	all := []string{"t6", "t5", "t4", "t3", "t2", "t1", "t0"}
	for _, test := range []struct {
		name      string
		f         store.TaskFilter
		want      []string
		wantTotal int
	}{
		{"everything", store.TaskFilter{}, all, 7},
		{"by ids", store.TaskFilter{IDs: []string{"t2", "t5", "t7", "nope"}}, []string{"t5", "t2"}, 2},
		{"by type", store.TaskFilter{Type: "get_products"}, []string{"t6", "t4", "t3", "t1", "t0"}, 5},
		{"by an unknown type", store.TaskFilter{Type: "sync_creatives"}, nil, 0},
		{"terminal statuses", store.TaskFilter{Statuses: []string{"completed", "failed"}}, []string{"t4", "t3"}, 2},
		{"submitted", store.TaskFilter{Statuses: []string{"submitted"}}, []string{"t6", "t2", "t0"}, 3},
		{"with a webhook", store.TaskFilter{HasWebhook: &yes}, []string{"t6", "t4", "t2", "t0"}, 4},
		{"without a webhook", store.TaskFilter{HasWebhook: &no}, []string{"t5", "t3", "t1"}, 3},
		{"all filters", store.TaskFilter{Type: "get_products", Statuses: []string{"submitted", "failed"}, HasWebhook: &yes,
			IDs: []string{"t0", "t1", "t4", "t6"}}, []string{"t6", "t4", "t0"}, 3},
		{"filters that exclude each other", store.TaskFilter{IDs: []string{"t0", "t1"}, Type: "create_media_buy"}, nil, 0},
		{"first page", store.TaskFilter{Limit: 3}, []string{"t6", "t5", "t4"}, 7},
		{"second page", store.TaskFilter{Offset: 3, Limit: 3}, []string{"t3", "t2", "t1"}, 7},
		{"last page", store.TaskFilter{Offset: 6, Limit: 3}, []string{"t0"}, 7},
		{"past the end", store.TaskFilter{Offset: 7, Limit: 3}, nil, 7},
		{"far past the end", store.TaskFilter{Offset: 100}, nil, 7},
		{"offset without limit", store.TaskFilter{Offset: 2}, all[2:], 7},
		{"no limit", store.TaskFilter{Limit: 0}, all, 7},
		{"a limit above the total", store.TaskFilter{Limit: 50}, all, 7},
		{"a negative limit is none", store.TaskFilter{Limit: -1}, all, 7},
		{"a negative offset is none", store.TaskFilter{Offset: -5, Limit: 2}, all[:2], 7},
		{"a filtered page", store.TaskFilter{Type: "get_products", Offset: 1, Limit: 2}, []string{"t4", "t3"}, 5},
	} {
		got, total, err := s.ListTasks(ctx, alpha.ID, owner, test.f)
		wantErr(t, fmt.Sprintf("ListTasks(%s)", test.name), err, nil)
		ids := make([]string, len(got))
		for i, task := range got {
			ids[i] = task.ID
			if task.Owner != owner {
				t.Errorf("ListTasks(%s) listed %s of %+v", test.name, task.ID, task.Owner)
			}
			if !store.TaskMatches(task, test.f) {
				t.Errorf("ListTasks(%s) listed %s, which store.TaskMatches rejects", test.name, task.ID)
			}
		}
		if diff := cmp.Diff(test.want, ids, cmpopts.EquateEmpty()); diff != "" || total != test.wantTotal {
			t.Errorf("ListTasks(%s) = %v of %d, want %v of %d", test.name, ids, total, test.want, test.wantTotal)
		}
	}

	// Listed tasks are whole: as Task returns them.
	got, _, err := s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{})
	wantErr(t, "ListTasks", err, nil)
	for _, task := range got {
		if one := getTask(t, s, alpha.ID, owner, task.ID); !cmp.Equal(one, task, taskOpts) {
			t.Errorf("ListTasks gave %s as %+v; Task gives %+v", task.ID, task, one)
		}
		wantUTC(t, "ListTasks "+task.ID, task)
	}

	// Pages of two, one after another, list every task once, in order.
	var paged []string
	for offset := 0; ; offset += 2 {
		page, total, err := s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{Offset: offset, Limit: 2})
		wantErr(t, "ListTasks(page)", err, nil)
		if total != 7 {
			t.Errorf("ListTasks(offset %d) total = %d, want 7", offset, total)
		}
		if len(page) == 0 {
			break
		}
		for _, task := range page {
			paged = append(paged, task.ID)
		}
	}
	if diff := cmp.Diff(all, paged); diff != "" {
		t.Errorf("pages of 2 mismatch (-want +got):\n%s", diff)
	}

	// The other owners see their own.
	got, total, err := s.ListTasks(ctx, alpha.ID, sameAccount, store.TaskFilter{})
	wantErr(t, "ListTasks(another principal)", err, nil)
	if len(got) != 8 || total != 8 || got[0].ID != "t7" {
		t.Errorf("ListTasks(another principal) = %d of %d, newest %v, want 8 of 8, newest t7", len(got), total, got)
	}
	got, total, err = s.ListTasks(ctx, alpha.ID, store.TaskOwner{Account: "acct_9", Principal: "nobody"}, store.TaskFilter{})
	wantErr(t, "ListTasks(an owner with no tasks)", err, nil)
	if len(got) != 0 || total != 0 {
		t.Errorf("ListTasks(an owner with no tasks) = %d of %d, want none", len(got), total)
	}
	got, total, err = s.ListTasks(ctx, beta.ID, owner, store.TaskFilter{Statuses: []string{"completed"}})
	wantErr(t, "ListTasks(beta)", err, nil)
	if len(got) != 0 || total != 0 {
		t.Errorf("ListTasks(beta, completed) = %d of %d, want none: alpha's tasks finished, not beta's", len(got), total)
	}
}

// testPrincipalTasks checks that PrincipalTasks finds a principal's tasks
// of one id under every account, newest first, and no one else's.
func testPrincipalTasks(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	for _, o := range []store.TaskOwner{owner, samePrincipal, sameAccount, {Account: "acct_3", Principal: "buyer"}} {
		id := "task_1"
		if o.Account == "acct_3" {
			id = "task_2"
		}
		createTask(t, s, alpha.ID, newTask(id, o, "get_products", "submitted", false))
		createTask(t, s, beta.ID, newTask(id, o, "get_products", "submitted", false))
		time.Sleep(2 * time.Millisecond)
	}
	if _, err := s.FinishTask(ctx, alpha.ID, owner, "task_1", "completed", []byte(`{"products":[]}`), at(0)); err != nil {
		t.Fatal(err)
	}
	got, err := s.PrincipalTasks(ctx, alpha.ID, "buyer", "task_1")
	wantErr(t, "PrincipalTasks(buyer, task_1)", err, nil)
	want := []store.Task{getTask(t, s, alpha.ID, samePrincipal, "task_1"), getTask(t, s, alpha.ID, owner, "task_1")}
	if diff := cmp.Diff(want, got, taskOpts); diff != "" {
		t.Errorf("PrincipalTasks(buyer, task_1) mismatch (-want +got):\n%s", diff)
	}
	for _, c := range []struct{ principal, id string }{{"buyer", "no-such-task"}, {"nobody", "task_1"}, {"buy", "task_1"}} {
		got, err := s.PrincipalTasks(ctx, alpha.ID, c.principal, c.id)
		wantErr(t, fmt.Sprintf("PrincipalTasks(%q, %q)", c.principal, c.id), err, nil)
		if len(got) != 0 {
			t.Errorf("PrincipalTasks(%q, %q) = %+v, want none", c.principal, c.id, got)
		}
	}
	got, err = s.PrincipalTasks(ctx, beta.ID, "buyer", "task_1")
	wantErr(t, "PrincipalTasks(beta, buyer, task_1)", err, nil)
	if len(got) != 2 || got[0].Terminal() || got[1].Terminal() {
		t.Errorf("PrincipalTasks(beta, buyer, task_1) = %+v, want beta's two unfinished tasks", got)
	}
}
