package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/storefront/storefront/audit"
	"github.com/storefront/storefront/ledger"
	"github.com/storefront/storefront/store"
)

func auditRecord(publisher string, action audit.Action, token, target string) audit.Record {
	return audit.Record{Publisher: publisher, Actor: "ops", TokenID: token, Action: action, Target: target,
		Detail: map[string]string{"note": "why " + target}, Address: "192.0.2.7"}
}

func testAudit(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	if h, err := s.AuditHead(ctx, alpha.ID); err != nil || h != (audit.Head{}) {
		t.Errorf("AuditHead(empty trail) = %+v, %v, want the zero head", h, err)
	}
	if res, err := store.VerifyAudit(ctx, s, alpha.ID); err != nil || !res.OK || res.Checked != 0 {
		t.Errorf("VerifyAudit(empty trail) = %+v, %v, want ok", res, err)
	}
	recs := []audit.Record{
		auditRecord(alpha.ID, audit.RulebookSave, "tok_a", "rulebook"),
		auditRecord(alpha.ID, audit.TokenRevoke, "tok_b", "tok_a"),
		auditRecord(alpha.ID, audit.ProductPut, "tok_a", "ctv-premium"),
		auditRecord(alpha.ID, audit.AccountPut, "", "acct_1"),
	}
	recs[3].Actor, recs[3].Address = audit.CommandLine, audit.Local
	// The second record's clock is behind the first's: its entry keeps
	// the first one's time.
	times := []time.Time{tAt(time.Minute), tAt(0), tAt(2 * time.Minute), tAt(3 * time.Minute)}
	var entries []audit.Entry
	for i, r := range recs {
		e, err := s.AppendAudit(ctx, r, times[i])
		wantErr(t, fmt.Sprintf("AppendAudit(%d)", i), err, nil)
		entries = append(entries, e)
	}
	for i, e := range entries {
		wantTime := times[i]
		if i == 1 {
			wantTime = times[0]
		}
		prev := ledger.Genesis
		if i > 0 {
			prev = entries[i-1].Hash
		}
		if e.Sequence != int64(i+1) || e.PrevHash != prev || e.Hash != e.ComputeHash() || !e.Time.Equal(wantTime.Truncate(time.Microsecond)) {
			t.Errorf("entry %d = seq %d at %v, prev %s, want seq %d at %v after %s", i, e.Sequence, e.Time, e.PrevHash, i+1, wantTime, prev)
		}
		if diff := cmp.Diff(recs[i], e.Record); diff != "" {
			t.Errorf("entry %d record mismatch (-want +got):\n%s", i, diff)
		}
	}
	if h, err := s.AuditHead(ctx, alpha.ID); err != nil || h != entries[3].Head() {
		t.Errorf("AuditHead = %+v, %v, want %+v", h, err, entries[3].Head())
	}

	seqs := func(f audit.Filter) []int64 {
		t.Helper()
		es, err := s.AuditTrail(ctx, alpha.ID, f)
		wantErr(t, fmt.Sprintf("AuditTrail(%+v)", f), err, nil)
		out := []int64{}
		for _, e := range es {
			out = append(out, e.Sequence)
			if diff := cmp.Diff(entries[e.Sequence-1], e); diff != "" {
				t.Errorf("AuditTrail entry %d mismatch (-appended +listed):\n%s", e.Sequence, diff)
			}
		}
		return out
	}
	for _, test := range []struct {
		name   string
		filter audit.Filter
		want   []int64
	}{
		{"all, newest first", audit.Filter{}, []int64{4, 3, 2, 1}},
		{"a token's actions and what was done to it", audit.Filter{Token: "tok_a"}, []int64{3, 2, 1}},
		{"by action", audit.Filter{Action: audit.TokenRevoke}, []int64{2}},
		{"before", audit.Filter{Before: 3}, []int64{2, 1}},
		{"limit", audit.Filter{Limit: 2}, []int64{4, 3}},
		{"nothing matches", audit.Filter{Token: "tok_z"}, []int64{}},
	} {
		if got := seqs(test.filter); cmp.Diff(test.want, got) != "" {
			t.Errorf("AuditTrail(%s) = %v, want %v", test.name, got, test.want)
		}
	}
	var walked []audit.Entry
	wantErr(t, "WalkAudit", s.WalkAudit(ctx, alpha.ID, func(e audit.Entry) error { walked = append(walked, e); return nil }), nil)
	if diff := cmp.Diff(entries, walked); diff != "" {
		t.Errorf("WalkAudit mismatch (-appended +walked):\n%s", diff)
	}
	if res, err := store.VerifyAudit(ctx, s, alpha.ID); err != nil || !res.OK || res.Checked != 4 || res.Total != 4 {
		t.Errorf("VerifyAudit = %+v, %v, want 4 entries verified", res, err)
	}

	// What cannot be stored or hashed stably is cleaned before either.
	dirty := auditRecord(alpha.ID, audit.ProductDelete, "tok_a", "bad\x00id\x1b[31m\xff")
	e, err := s.AppendAudit(ctx, dirty, tAt(4*time.Minute))
	wantErr(t, "AppendAudit(control characters)", err, nil)
	if e.Target != "badid[31m\uFFFD" {
		t.Errorf("AppendAudit kept target %q", e.Target)
	}
	if got, _ := s.AuditTrail(ctx, alpha.ID, audit.Filter{Limit: 1}); len(got) != 1 || cmp.Diff(e, got[0]) != "" {
		t.Errorf("the cleaned entry did not read back as appended: %+v", got)
	}

	// Beta's trail is its own; an unknown publisher has none.
	if es, err := s.AuditTrail(ctx, beta.ID, audit.Filter{}); err != nil || len(es) != 0 {
		t.Errorf("AuditTrail(beta) = %d, %v, want none", len(es), err)
	}
	b, err := s.AppendAudit(ctx, auditRecord(beta.ID, audit.RulebookSave, "tok_c", "rulebook"), t0)
	if err != nil || b.Sequence != 1 || b.PrevHash != ledger.Genesis {
		t.Errorf("AppendAudit(beta) = seq %d prev %s, %v, want beta's first entry", b.Sequence, b.PrevHash, err)
	}
	_, err = s.AppendAudit(ctx, auditRecord(ghost, audit.RulebookSave, "", ""), t0)
	wantErr(t, "AppendAudit(unknown publisher)", err, store.ErrNotFound)
	_, err = s.AuditTrail(ctx, ghost, audit.Filter{})
	wantErr(t, "AuditTrail(unknown publisher)", err, store.ErrNotFound)
	_, err = s.AuditHead(ctx, ghost)
	wantErr(t, "AuditHead(unknown publisher)", err, store.ErrNotFound)
}

// testAuditConcurrentAppends: 16 writers append at once to one trail; it
// stays one unbroken chain with every entry in it.
func testAuditConcurrentAppends(t *testing.T, s store.Store) {
	ctx := t.Context()
	withPublishers(t, s)
	parallel(16, func(i int) {
		if _, err := s.AppendAudit(ctx, auditRecord(alpha.ID, audit.ProductPut, "tok_a", fmt.Sprintf("p%d", i)), tAt(time.Duration(i)*time.Second)); err != nil {
			t.Errorf("AppendAudit(%d) = %v", i, err)
		}
	})
	res, err := store.VerifyAudit(ctx, s, alpha.ID)
	if err != nil || !res.OK || res.Checked != 16 {
		t.Errorf("VerifyAudit after 16 concurrent appends = %+v, %v, want 16 entries verified", res, err)
	}
}
