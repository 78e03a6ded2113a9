package products_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
	"github.com/storefront/storefront/vocab"
)

// switchedLedger is the store's ledger, refusing every append while down.
type switchedLedger struct {
	products.Ledger
	down atomic.Bool
}

func (l *switchedLedger) Append(ctx context.Context, r ledger.Record) (ledger.Entry, error) {
	if l.down.Load() {
		return ledger.Entry{}, errors.New("the ledger is down")
	}
	return l.Ledger.Append(ctx, r)
}

// TestDirectiveSpentOnlyWhenAnswered: a forced arm is spent by the call
// answered with it and by no other. A call refused over its push config,
// or whose answer cannot be recorded, leaves the directive to the next
// call; so does a call whose answer the directive does not shape. Both
// stores.
func TestDirectiveSpentOnlyWhenAnswered(t *testing.T) {
	for _, backend := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"memory", func(t *testing.T) store.Store { return memstore.New() }},
		{"postgres", func(t *testing.T) store.Store { return pgtest.Open(t) }},
	} {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			s := backend.open(t)
			if err := demo.Seed(ctx, s, demo.Written); err != nil {
				t.Fatal(err)
			}
			l := &switchedLedger{Ledger: store.Ledger{Store: s}}
			svc := &products.Service{
				Snapshots: store.NewSnapshots(s), Ledger: l, Accounts: access.Accounts{Store: s},
				Directives: store.Directives{Store: s}, Tasks: store.Tasks{Store: s},
				WebhookAllowed: func(url string) error {
					if url == "https://refused.example/hook" {
						return errors.New("the webhook URL points at a private address")
					}
					return nil
				},
				Now: func() time.Time { return clock }, Log: quiet,
			}
			acct, err := s.EnsureAccount(ctx, nw, store.Account{Operator: "agency.example", BrandDomain: "acme.example", Sandbox: true, Disclosure: vocab.Exact})
			if err != nil {
				t.Fatal(err)
			}
			const base = `"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"video","account":{"brand":{"domain":"acme.example"},"operator":"agency.example","sandbox":true}`
			call := func(extra string) map[string]any {
				t.Helper()
				r := svc.GetProducts(ctx, products.Call{Publisher: nw, Principal: agency, Args: []byte(`{` + base + extra + `}`)})
				spectest.GetProducts(t, r.Payload)
				return payload(t, r.Payload)
			}
			code := func(m map[string]any) any {
				e, _ := m["adcp_error"].(map[string]any)
				return e["code"]
			}
			// arm names an answer in a failure message: status, and the
			// error code or task id.
			arm := func(m map[string]any) string {
				return fmt.Sprintf("%v (%v%v)", m["status"], code(m), m["task_id"])
			}
			set := func(d products.Directive) {
				t.Helper()
				if err := s.SetDirective(ctx, nw, acct.ID, agency.ID, d); err != nil {
					t.Fatal(err)
				}
			}

			// Refused over its push config: the forced task is not made,
			// and the next call gets it.
			set(products.Directive{Arm: "submitted", TaskID: "task_forced_1"})
			if m := call(`,"push_notification_config":{"url":"https://refused.example/hook","operation_id":"op-1"}`); m["status"] != "failed" || code(m) != "INVALID_REQUEST" {
				t.Fatalf("a forced submitted call with a refused webhook = %v, want INVALID_REQUEST", arm(m))
			}
			if m := call(``); m["status"] != "submitted" || m["task_id"] != "task_forced_1" {
				t.Fatalf("the next call after the refused one = %v, want the forced submitted arm", arm(m))
			}
			if m := call(``); m["status"] != "completed" {
				t.Fatalf("a call after the forced answer = %v, want completed: the directive is spent", m["status"])
			}

			// The answer cannot be recorded: transient error, directive
			// kept; once the ledger is back the next call is forced.
			set(products.Directive{Arm: "rejected", Reason: "Forced after an outage."})
			l.down.Store(true)
			if m := call(``); code(m) != "SERVICE_UNAVAILABLE" {
				t.Fatalf("a forced call whose append fails = %v, want SERVICE_UNAVAILABLE", arm(m))
			}
			l.down.Store(false)
			if m := call(``); m["status"] != "rejected" || m["reason"] != "Forced after an outage." {
				t.Fatalf("the next call once the ledger is back = %v, want the forced rejection", arm(m))
			}
			if m := call(``); m["status"] != "completed" {
				t.Fatalf("a call after the forced rejection = %v, want completed", m["status"])
			}

			// A stale directive does not shape a declined answer: the
			// decline leaves it, and the next answered brief carries it.
			set(products.Directive{Arm: "stale"})
			if m := call(`,"filters":{"budget_range":{"max":1,"currency":"USD"}}`); m["status"] != "rejected" {
				t.Fatalf("a brief under the budget floor = %v, want the rulebook's decline", m["status"])
			}
			m := call(``)
			errs, _ := m["errors"].([]any)
			if m["status"] != "completed" || len(errs) != 1 || errs[0].(map[string]any)["code"] != "STALE_RESPONSE" {
				t.Fatalf("the next brief = %v, want completed with the STALE_RESPONSE advisory", arm(m))
			}
		})
	}
}
