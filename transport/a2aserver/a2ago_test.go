package a2aserver_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv/push"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/storefront/storefront/internal/testenv"
	"github.com/storefront/storefront/transport/a2aserver"
)

// The storefront serves A2A through a2a-go's JSON-RPC bindings only: its
// handler answers every call with a terminal task and keeps none, and AdCP
// webhooks are delivered by webhook/, so a2a-go's push sender and task
// store are not wired in. These tests pin that the a2a-go release in
// go.mod (v2.4.0) has both protections on by default, so that wiring either
// in later starts safe (against v2.3.1, which had neither, they do not
// build); and that the storefront's own A2A surface gives no caller
// another's task.

// TestA2AGoPushSenderRefusesPrivateTargets: the push sender's SSRF guard
// refuses, at dial time, a receiver on a loopback address, unless the
// deployment opts out.
func TestA2AGoPushSenderRefusesPrivateTargets(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}

	guarded := push.NewHTTPPushSender(&push.HTTPSenderConfig{FailOnError: true})
	if err := guarded.SendPush(context.Background(), &a2a.PushConfig{URL: srv.URL + "/hook"}, task); err == nil || !strings.Contains(err.Error(), "blocked address") {
		t.Errorf("SendPush to %s = %v, want the SSRF guard's refusal", srv.URL, err)
	}
	if hits.Load() != 0 {
		t.Error("the guarded sender reached the loopback receiver")
	}

	// The control: the same send with the guard switched off arrives.
	open := push.NewHTTPPushSender(&push.HTTPSenderConfig{FailOnError: true, AllowPrivateNetworks: true})
	if err := open.SendPush(context.Background(), &a2a.PushConfig{URL: srv.URL + "/hook"}, task); err != nil || hits.Load() != 1 {
		t.Errorf("unguarded SendPush = %v with %d deliveries, want one delivery", err, hits.Load())
	}
}

type userKey struct{}

// TestA2AGoTaskStoreTenancy: the task store masks another tenant's task as
// not found, on Get as on every path that reads through it.
func TestA2AGoTaskStoreTenancy(t *testing.T) {
	store := taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{Authenticator: func(ctx context.Context) (string, error) {
		u, _ := ctx.Value(userKey{}).(string)
		return u, nil
	}})
	alice := context.WithValue(context.Background(), userKey{}, "alice")
	bob := context.WithValue(context.Background(), userKey{}, "bob")
	task := &a2a.Task{ID: "task-alice", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	if _, err := store.Create(alice, task); err != nil {
		t.Fatal(err)
	}
	if got, err := store.Get(alice, task.ID); err != nil || got.Task.ID != task.ID {
		t.Fatalf("the owner's Get = %v, %v", got, err)
	}
	if got, err := store.Get(bob, task.ID); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another tenant's Get = %v, %v, want ErrTaskNotFound", got, err)
	}
}

// TestA2ATasksStayWithTheirCaller: over the storefront's own A2A endpoint,
// no method reads, cancels, lists, resubscribes to or registers a push
// notification for a task, not even the caller's own, so none can reach
// another caller's: each answers as for a task that does not exist, or as
// unsupported, the same for every caller.
func TestA2ATasksStayWithTheirCaller(t *testing.T) {
	env := testenv.Start(t)
	c, _ := client(t, env.BaseURL, env.BuyerToken, a2aserver.ProfileURI)
	task := invoke(t, c, "get_products", `{"buying_mode":"brief","brief":"coffee video"}`)
	if task.ID == "" {
		t.Fatal("no task id")
	}
	id := string(task.ID)
	profile := []string{"A2A-Extensions", a2aserver.ProfileURI}
	for _, token := range []string{env.BuyerToken, "", "sf_buyer_someone_else"} {
		auth := []string{}
		if token != "" {
			auth = []string{"Authorization", "Bearer " + token}
		}
		for _, call := range []struct {
			method, params string
			want           float64
		}{
			{"GetTask", `{"id":"` + id + `"}`, -32001},
			{"CancelTask", `{"id":"` + id + `"}`, -32001},
			{"ListTasks", `{}`, -32004},
			{"CreateTaskPushNotificationConfig", `{"taskId":"` + id + `","url":"http://127.0.0.1:9/hook"}`, -32003},
			{"GetTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"cfg"}`, -32003},
			{"ListTaskPushNotificationConfigs", `{"taskId":"` + id + `"}`, -32003},
			{"DeleteTaskPushNotificationConfig", `{"taskId":"` + id + `","id":"cfg"}`, -32003},
		} {
			want, wantStatus := call.want, http.StatusOK
			if token == "sf_buyer_someone_else" {
				// Credentials that name no principal are refused before
				// any method is read (TestAuthHTTP).
				want, wantStatus = -31401, http.StatusUnauthorized
			}
			status, _, m := rpc(t, env.BaseURL+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"`+call.method+`","params":`+call.params+`}`, append(profile, auth...)...)
			e, _ := m["error"].(map[string]any)
			if status != wantStatus || m["result"] != nil || e == nil || e["code"] != want {
				t.Errorf("%s by %q = %d %v, want %d with error %v", call.method, token, status, m, wantStatus, want)
			}
		}
	}
}
