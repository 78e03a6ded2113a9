package buying_test

import (
	"testing"
)

// TestSyncAccountsSettingsUpdate: a settings-update entry, which this
// seller does not support, is that entry's failure under the brand and
// operator its account reference names; an entry naming neither cannot be
// answered as an entry (the schema requires both), so it fails the
// request. Both answers validate against the official schema.
func TestSyncAccountsSettingsUpdate(t *testing.T) {
	e := newEnv(t)
	for _, test := range []struct {
		name      string
		entry     obj
		wantEntry bool
	}{
		{"natural key", obj{"account": account("acme.example")}, true},
		{"account id", obj{"account": obj{"account_id": "acct_1"}}, false},
		{"nothing", obj{"account": obj{}}, false},
	} {
		t.Run(test.name, func(t *testing.T) {
			r := e.svc.SyncAccounts(t.Context(), e.call(buyer, obj{"adcp_version": "3.2-rc.7", "idempotency_key": key(), "accounts": []any{test.entry}}))
			validate(t, "sync_accounts", r.Payload)
			m := decode(t, r.Payload)
			if test.wantEntry {
				accts, _ := m["accounts"].([]any)
				if m["status"] != "completed" || len(accts) != 1 || accts[0].(obj)["action"] != "failed" {
					t.Fatalf("SyncAccounts(%v) = %s, want the entry failed", test.entry, r.Payload)
				}
				got := accts[0].(obj)["errors"].([]any)[0].(obj)["code"]
				if got != "UNSUPPORTED_PROVISIONING" {
					t.Errorf("entry error = %v, want UNSUPPORTED_PROVISIONING", got)
				}
				return
			}
			if m["status"] != "failed" {
				t.Fatalf("SyncAccounts(%v) = %s, want the request failed", test.entry, r.Payload)
			}
		})
	}
}
