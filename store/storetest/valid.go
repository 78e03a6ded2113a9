package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/jsonfield"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
)

// Text no store keeps: PostgreSQL refuses a NUL and invalid UTF-8 outright
// (and, before the stores checked, answered with an error of its own
// while the memory store kept the same bytes).
const (
	nul     = "a\x00b"
	badUTF8 = "caf\xe9"
	bell    = "a\x07b"
)

// wantInvalid fails unless err is store.ErrInvalid naming pointer.
func wantInvalid(t *testing.T, call string, err error, pointer string) {
	t.Helper()
	var v jsonfield.Invalid
	if !errors.Is(err, store.ErrInvalid) || !errors.As(err, &v) {
		t.Errorf("%s = %v, want ErrInvalid", call, err)
		return
	}
	for _, f := range v {
		if f.Pointer == pointer {
			return
		}
	}
	t.Errorf("%s = %v, want a failure at %s", call, err, pointer)
}

// testInvalidWrites: both stores refuse the same bad text with the same
// typed error, naming the field, and keep nothing of the refused write.
func testInvalidWrites(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	for _, test := range []struct {
		name    string
		pub     products.Publisher
		pointer string
	}{
		{"NUL in the name", products.Publisher{ID: alpha.ID, Name: nul, Domain: alpha.Domain}, "/name"},
		{"invalid UTF-8 in the name", products.Publisher{ID: alpha.ID, Name: badUTF8, Domain: alpha.Domain}, "/name"},
		{"a control character in the name", products.Publisher{ID: alpha.ID, Name: bell, Domain: alpha.Domain}, "/name"},
		{"a line break in the name", products.Publisher{ID: alpha.ID, Name: "a\nb", Domain: alpha.Domain}, "/name"},
		{"no name", products.Publisher{ID: alpha.ID, Domain: alpha.Domain}, "/name"},
		{"a domain that is not one", products.Publisher{ID: alpha.ID, Name: "x", Domain: "not a domain <script>"}, "/domain"},
		{"NUL in the domain", products.Publisher{ID: alpha.ID, Name: "x", Domain: "alpha\x00.example"}, "/domain"},
		{"no domain", products.Publisher{ID: alpha.ID, Name: "x"}, "/domain"},
		{"an id with a space", products.Publisher{ID: "al pha", Name: "x", Domain: alpha.Domain}, "/id"},
	} {
		wantInvalid(t, "PutPublisher("+test.name+")", s.PutPublisher(ctx, test.pub), test.pointer)
	}
	if got, err := s.Publisher(ctx, alpha.ID); err != nil || got != alpha {
		t.Errorf("Publisher(alpha) after refused puts = %+v, %v, want it unchanged", got, err)
	}
	if ps, _ := s.Publishers(ctx); len(ps) != 2 {
		t.Errorf("Publishers() after refused puts = %d publishers, want 2", len(ps))
	}

	good := store.Account{ID: "acct_good", Operator: "op.example", BrandDomain: "brand.example"}
	for _, test := range []struct {
		name    string
		edit    func(*store.Account)
		pointer string
	}{
		{"NUL in the id", func(a *store.Account) { a.ID = "acct" + nul }, "/account_id"},
		{"invalid UTF-8 in the id", func(a *store.Account) { a.ID = badUTF8 }, "/account_id"},
		{"a space in the id", func(a *store.Account) { a.ID = "acct 1" }, "/account_id"},
		{"an operator that is not a domain", func(a *store.Account) { a.Operator = "Op Example" }, "/operator"},
		{"NUL in the brand domain", func(a *store.Account) { a.BrandDomain = "brand\x00.example" }, "/brand_domain"},
		{"NUL in the brand id", func(a *store.Account) { a.BrandID = nul }, "/brand_id"},
	} {
		a := good
		test.edit(&a)
		_, err := s.PutAccount(ctx, alpha.ID, a)
		wantInvalid(t, "PutAccount("+test.name+")", err, test.pointer)
		_, err = s.EnsureAccount(ctx, alpha.ID, a)
		wantInvalid(t, "EnsureAccount("+test.name+")", err, test.pointer)
	}
	if as, err := s.ListAccounts(ctx, alpha.ID); err != nil || len(as) != 0 {
		t.Errorf("ListAccounts after refused puts = %v, %v, want none", as, err)
	}

	for _, test := range []struct {
		name    string
		tok     store.Token
		pointer string
	}{
		{"NUL in the name", adminTok(alpha.ID, nul), "/name"},
		{"invalid UTF-8 in the name", adminTok(alpha.ID, badUTF8), "/name"},
		{"NUL in the buyer id", buyerTok(alpha.ID, "buyer"+nul), "/buyer/id"},
		{"invalid UTF-8 in the buyer id", buyerTok(alpha.ID, badUTF8), "/buyer/id"},
		{"NUL in an account", buyerTok(alpha.ID, "buyer", "acct_1", "acct"+nul), "/buyer/accounts/1"},
	} {
		_, err := s.CreateToken(ctx, store.TokenDigest("sf_admin_"+test.name), test.tok)
		wantInvalid(t, "CreateToken("+test.name+")", err, test.pointer)
	}
	if ts, err := s.ListTokens(ctx, alpha.ID); err != nil || len(ts) != 0 {
		t.Errorf("ListTokens after refused creates = %d tokens, %v, want none", len(ts), err)
	}

	rb := rulebook("Alpha", 2)
	_, err := s.SaveRulebook(ctx, alpha.ID, rb, 0, "alice", "why"+nul)
	wantInvalid(t, "SaveRulebook(NUL in the note)", err, "/note")
	_, err = s.SaveRulebook(ctx, alpha.ID, rb, 0, "alice", badUTF8)
	wantInvalid(t, "SaveRulebook(invalid UTF-8 in the note)", err, "/note")
	_, err = s.SaveRulebook(ctx, alpha.ID, rb, 0, nul, "")
	wantInvalid(t, "SaveRulebook(NUL in the author)", err, "/author")
	bad := rulebook("Alpha", 2)
	bad.Rules[1].Name = "MR" + nul
	_, err = s.SaveRulebook(ctx, alpha.ID, bad, 0, "alice", "")
	wantInvalid(t, "SaveRulebook(NUL in a rule's name)", err, "/rules/1/name")
	wantRulebookVersion(t, s, alpha.ID, 0)

	ps := demoProducts(t, 2)
	ps[1].Description = "fine\n" + badUTF8
	if bulk, ok := s.(store.BulkCatalogue); ok {
		_, err = bulk.PutProducts(ctx, alpha.ID, ps, 0)
		wantInvalid(t, "PutProducts(invalid UTF-8 in a description)", err, "/1/description")
	}
	_, err = s.PutProduct(ctx, alpha.ID, ps[1], 0)
	wantInvalid(t, "PutProduct(invalid UTF-8 in a description)", err, "/0/description")
	cats := catalogues(t, s)
	_, err = cats.EditCatalogue(ctx, alpha.ID, store.CatalogueEdit{Put: ps[:1], Author: "alice", Note: nul})
	wantInvalid(t, "EditCatalogue(NUL in the note)", err, "/note")
	_, err = cats.ImportCatalogue(ctx, alpha.ID, store.CatalogueImport{Author: "alice"}, stream(ps))
	wantInvalid(t, "ImportCatalogue(invalid UTF-8 in a description)", err, "/description")
	_, err = cats.RollbackCatalogue(ctx, alpha.ID, 1, 0, nul)
	wantInvalid(t, "RollbackCatalogue(NUL in the author)", err, "/author")
	wantCatalogue(t, s, alpha.ID, []products.Product{}, 0)

	r := record(alpha.ID, 1)
	r.Account = "acct" + nul
	_, err = s.Append(ctx, r)
	wantInvalid(t, "Append(NUL in the account)", err, "/Account")
	r = record(alpha.ID, 1)
	r.Principal = badUTF8
	_, err = s.Append(ctx, r)
	wantInvalid(t, "Append(invalid UTF-8 in the principal)", err, "/Principal")
	if n, err := s.LedgerLen(ctx, alpha.ID); err != nil || n != 0 {
		t.Errorf("LedgerLen after refused appends = %d, %v, want 0", n, err)
	}

	task := store.Task{ID: "task_1", Owner: owner, Type: "get_products", Status: "submitted", Message: "wait" + nul, CreatedAt: at(0)}
	wantInvalid(t, "CreateTask(NUL in the message)", s.CreateTask(ctx, alpha.ID, task), "/message")
	task.Message, task.Owner.Account = "", badUTF8
	wantInvalid(t, "CreateTask(invalid UTF-8 in the account)", s.CreateTask(ctx, alpha.ID, task), "/owner/account")
	wantInvalid(t, "SetDirective(NUL in the reason)", s.SetDirective(ctx, alpha.ID, "acct_1", "buyer", directive(nul)), "/directive/Reason")
	wantInvalid(t, "SetDirective(NUL in the account)", s.SetDirective(ctx, alpha.ID, nul, "buyer", directive("r")), "/account")

	b := testBuy("mb_1", "acct_1", "buyer")
	b.Packages[0].ProductID = nul
	wantInvalid(t, "CreateBuy(NUL in a product id)", s.CreateBuy(ctx, alpha.ID, b, created(1)), "/packages/0/product_id")
	if bs, err := s.Buys(ctx, alpha.ID, store.BuyFilter{}); err != nil || len(bs) != 0 {
		t.Errorf("Buys after a refused create = %d, %v, want none", len(bs), err)
	}
}

// testUnkeepableKeys: a lookup by a key no store can hold finds nothing,
// in both stores alike (PostgreSQL would refuse to compare with it).
func testUnkeepableKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	acct, err := s.EnsureAccount(ctx, alpha.ID, store.Account{Operator: "op.example", BrandDomain: "brand.example"})
	wantErr(t, "EnsureAccount", err, nil)
	wantErr(t, "CreateTask", s.CreateTask(ctx, alpha.ID, store.Task{ID: "task_1", Owner: owner, Type: "get_products", Status: "submitted", CreatedAt: at(0)}), nil)
	for _, key := range []string{nul, badUTF8, "\x00unknown"} {
		q := fmt.Sprintf("%q", key)
		notFound := []struct {
			name string
			call func() error
		}{
			{"Publisher", func() error { _, err := s.Publisher(ctx, key); return err }},
			{"AccountByID", func() error { _, err := s.AccountByID(ctx, alpha.ID, key); return err }},
			{"AccountByKey", func() error { _, err := s.AccountByKey(ctx, alpha.ID, key); return err }},
			{"Token", func() error { _, err := s.Token(ctx, alpha.ID, key); return err }},
			{"RevokeToken", func() error { _, err := s.RevokeToken(ctx, alpha.ID, key, t0); return err }},
			{"TokenByDigest", func() error { _, err := s.TokenByDigest(ctx, key); return err }},
			{"UseToken", func() error { _, err := s.UseToken(ctx, store.AdminToken, "", key, t0); return err }},
			{"Task(id)", func() error { _, err := s.Task(ctx, alpha.ID, owner, key); return err }},
			{"Task(account)", func() error {
				_, err := s.Task(ctx, alpha.ID, store.TaskOwner{Account: key, Principal: owner.Principal}, "task_1")
				return err
			}},
			{"FinishTask", func() error {
				_, err := s.FinishTask(ctx, alpha.ID, store.TaskOwner{Account: key, Principal: owner.Principal}, "task_1", "completed", nil, at(1))
				return err
			}},
			{"RecordDelivery", func() error {
				return s.RecordDelivery(ctx, alpha.ID, store.TaskOwner{Account: key, Principal: owner.Principal}, "task_1", store.Delivery{Attempts: 1})
			}},
			{"SeededCatalogue", func() error { _, _, err := s.SeededCatalogue(ctx, alpha.ID, key); return err }},
			{"AccountTerms", func() error { _, err := s.AccountTerms(ctx, alpha.ID, key); return err }},
			{"Buy", func() error { _, err := s.Buy(ctx, alpha.ID, key); return err }},
			{"History", func() error { _, err := s.History(ctx, alpha.ID, key, 0); return err }},
			{"Order", func() error { _, err := s.Order(ctx, alpha.ID, key); return err }},
			{"GovernanceAgent", func() error { _, err := s.GovernanceAgent(ctx, alpha.ID, key); return err }},
		}
		for _, c := range notFound {
			if err := c.call(); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s(%s) = %v, want ErrNotFound", c.name, q, err)
			}
		}
		empty := []struct {
			name string
			call func() (int, error)
		}{
			{"Decisions(account)", func() (int, error) {
				es, err := s.Decisions(ctx, alpha.ID, store.DecisionFilter{Account: key, Limit: 10})
				return len(es), err
			}},
			{"ListTasks(account)", func() (int, error) {
				ts, n, err := s.ListTasks(ctx, alpha.ID, store.TaskOwner{Account: key, Principal: owner.Principal}, store.TaskFilter{Limit: 10})
				return len(ts) + n, err
			}},
			{"ListTasks(ids)", func() (int, error) {
				ts, n, err := s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{IDs: []string{key}, Limit: 10})
				return len(ts) + n, err
			}},
			{"ListTasks(statuses)", func() (int, error) {
				ts, n, err := s.ListTasks(ctx, alpha.ID, owner, store.TaskFilter{Statuses: []string{key}, Limit: 10})
				return len(ts) + n, err
			}},
			{"PrincipalTasks", func() (int, error) { ts, err := s.PrincipalTasks(ctx, alpha.ID, key, "task_1"); return len(ts), err }},
			{"ClaimDirective", func() (int, error) {
				d, err := s.ClaimDirective(ctx, alpha.ID, key, "buyer", "claim-token", time.Minute)
				if d != nil {
					return 1, err
				}
				return 0, err
			}},
			{"Buys", func() (int, error) {
				bs, err := s.Buys(ctx, alpha.ID, store.BuyFilter{Account: key})
				return len(bs), err
			}},
			{"Orders", func() (int, error) { os, err := s.Orders(ctx, alpha.ID, key); return len(os), err }},
			{"Delivery", func() (int, error) { rs, err := s.Delivery(ctx, alpha.ID, []string{key}); return len(rs), err }},
			{"AuditTrail", func() (int, error) {
				es, err := s.AuditTrail(ctx, alpha.ID, audit.Filter{Token: key})
				return len(es), err
			}},
		}
		for _, c := range empty {
			if n, err := c.call(); err != nil || n != 0 {
				t.Errorf("%s(%s) = %d, %v, want nothing and no error", c.name, q, n, err)
			}
		}
	}
	// The keepable keys still find what is there.
	if _, err := s.AccountByID(ctx, alpha.ID, acct.ID); err != nil {
		t.Errorf("AccountByID(%q) = %v", acct.ID, err)
	}
	if _, err := s.Task(ctx, alpha.ID, owner, "task_1"); err != nil {
		t.Errorf("Task(task_1) = %v", err)
	}
}
