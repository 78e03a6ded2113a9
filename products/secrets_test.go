package products_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
	"github.com/storefront/storefront/store/pgstore/pgtest"
	"github.com/storefront/storefront/vocab"
)

// TestWebhookSecretsNotKept: the token and credentials a buyer registers
// with a task's webhook are kept only sealed, with the webhook: the copy
// of the request the task keeps, and the one kept beside the ledger for
// backtests, carry a placeholder, and the ledger's request digest is the
// digest of that kept copy, so a backtest still replays it. On
// PostgreSQL no row of any table holds them in plaintext. Both stores.
func TestWebhookSecretsNotKept(t *testing.T) {
	const (
		token       = "push-token-SECRET-0123456789"
		credentials = "hmac-credentials-SECRET-0123456789abcdef"
	)
	for _, backend := range []struct {
		name string
		open func(t *testing.T) (store.Store, func() []byte)
	}{
		{"memory", func(t *testing.T) (store.Store, func() []byte) { return memstore.New(), nil }},
		{"postgres", func(t *testing.T) (store.Store, func() []byte) {
			s := pgtest.Open(t)
			return s, func() []byte {
				var dump string
				if err := s.Pool().QueryRow(context.Background(), `SELECT string_agg(j, E'\n') FROM (
					SELECT row_to_json(x)::text AS j FROM tasks x UNION ALL
					SELECT row_to_json(x)::text FROM ledger_requests x UNION ALL
					SELECT row_to_json(x)::text FROM ledger_entries x UNION ALL
					SELECT row_to_json(x)::text FROM replays x) rows`).Scan(&dump); err != nil {
					t.Fatal(err)
				}
				return []byte(dump)
			}
		}},
	} {
		t.Run(backend.name, func(t *testing.T) {
			ctx := context.Background()
			s, dump := backend.open(t)
			if err := demo.Seed(ctx, s, demo.Written); err != nil {
				t.Fatal(err)
			}
			svc := &products.Service{
				Snapshots: store.NewSnapshots(s), Ledger: store.Ledger{Store: s, KeepRequests: true}, Accounts: access.Accounts{Store: s},
				Directives: store.Directives{Store: s}, Tasks: store.Tasks{Store: s},
				Now: func() time.Time { return clock }, Log: quiet,
			}
			acct, err := s.EnsureAccount(ctx, nw, store.Account{Operator: "agency.example", BrandDomain: "acme.example", Sandbox: true, Disclosure: vocab.Exact})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetDirective(ctx, nw, acct.ID, agency.ID, products.Directive{Arm: "submitted", TaskID: "task_secret"}); err != nil {
				t.Fatal(err)
			}
			args := `{"adcp_version":"3.2-beta.5","buying_mode":"brief","brief":"video",` +
				`"account":{"brand":{"domain":"acme.example"},"operator":"agency.example","sandbox":true},` +
				`"push_notification_config":{"url":"https://buyer.example/hooks","operation_id":"op-1","token":"` + token + `",` +
				`"authentication":{"schemes":["HMAC-SHA256"],"credentials":"` + credentials + `"}}}`
			r := svc.GetProducts(ctx, products.Call{Publisher: nw, Principal: agency, Args: []byte(args)})
			if m := payload(t, r.Payload); m["status"] != "submitted" {
				t.Fatalf("the forced call = %s, want submitted", r.Payload)
			}
			task, err := s.Task(ctx, nw, store.TaskOwner{Account: acct.ID, Principal: agency.ID}, "task_secret")
			if err != nil {
				t.Fatal(err)
			}
			if task.Webhook == nil || task.Webhook.Token != token || task.Webhook.Credentials != credentials || task.Webhook.Scheme != "HMAC-SHA256" {
				t.Errorf("the task's webhook = %+v, want the token and credentials as registered", task.Webhook)
			}
			for _, secret := range []string{token, credentials} {
				if bytes.Contains(task.Request, []byte(secret)) {
					t.Errorf("the task's kept request holds %q: %s", secret, task.Request)
				}
			}
			if kept, err := products.DecodeRequest(task.Request); err != nil || kept.Push == nil || kept.Push.URL != "https://buyer.example/hooks" {
				t.Errorf("the kept request decodes as %+v, %v; want the request with its webhook", kept, err)
			}
			// Answered at once (no curation here), and recorded with its
			// request, as a backtest reads it.
			if r := svc.GetProducts(ctx, products.Call{Publisher: nw, Principal: agency, Args: []byte(args)}); payload(t, r.Payload)["status"] != "completed" {
				t.Fatalf("the second call = %s, want completed", r.Payload)
			}
			recorded := 0
			err = s.(interface {
				WalkRecorded(context.Context, string, time.Time, func(ledger.Entry) error) error
			}).WalkRecorded(ctx, nw, time.Time{}, func(e ledger.Entry) error {
				if e.Request == nil {
					return nil
				}
				recorded++
				for _, secret := range []string{token, credentials} {
					if bytes.Contains(e.Request, []byte(secret)) {
						t.Errorf("the ledger's kept request %d holds %q", e.Sequence, secret)
					}
				}
				if ledger.Digest(e.Request) != e.RequestDigest {
					t.Errorf("entry %d: the request digest is not the kept request's: a backtest would skip it", e.Sequence)
				}
				return nil
			})
			if err != nil || recorded == 0 {
				t.Fatalf("WalkRecorded = %d kept requests, %v", recorded, err)
			}
			if dump != nil {
				rows := dump()
				for _, secret := range []string{token, credentials} {
					if bytes.Contains(rows, []byte(secret)) {
						t.Errorf("a row holds %q in plaintext", secret)
					}
				}
			}
		})
	}
}
