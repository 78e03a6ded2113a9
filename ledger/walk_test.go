package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// chains is a Chains over entries held in memory, whole.
type chains struct {
	entries []Entry
	lenErr  error
	walkErr error
}

func (c *chains) LedgerLen(context.Context, string) (int64, error) {
	return int64(len(c.entries)), c.lenErr
}

func (c *chains) WalkLedger(_ context.Context, _ string, fn func(Entry) error) error {
	for _, e := range c.entries {
		if err := fn(e); err != nil {
			return err
		}
	}
	return c.walkErr
}

func TestVerifyWholeChain(t *testing.T) {
	ctx := context.Background()
	var calls [][2]int64
	res, err := Verify(ctx, &chains{entries: chain(4)}, "northwind", func(checked, total int64) {
		calls = append(calls, [2]int64{checked, total})
	})
	if err != nil || !res.OK || res.Checked != 4 || res.Total != 4 || res.From != 0 || res.Break != nil {
		t.Fatalf("Verify(intact chain of 4) = %+v, %v", res, err)
	}
	if len(calls) != 4 || calls[3] != [2]int64{4, 4} {
		t.Errorf("progress calls = %v, want 4 ending at 4 of 4", calls)
	}

	empty, err := Verify(ctx, &chains{}, "northwind", nil)
	if err != nil || !empty.OK || empty.Checked != 0 || empty.Total != 0 {
		t.Errorf("Verify(empty chain) = %+v, %v, want ok", empty, err)
	}

	altered := chain(4)
	altered[2].Arm = "completed"
	res, err = Verify(ctx, &chains{entries: altered}, "northwind", nil)
	if err != nil || res.OK || res.Break == nil || res.Break.Sequence != 3 || res.Checked != 2 {
		t.Fatalf("Verify(entry 3 altered) = %+v, %v, want a break at 3 after 2 checked", res, err)
	}
}

// TestVerifyErrors: a source that cannot be read is an error, not a
// broken chain.
func TestVerifyErrors(t *testing.T) {
	ctx := context.Background()
	outage := errors.New("outage")
	if _, err := Verify(ctx, &chains{entries: chain(2), lenErr: outage}, "northwind", nil); !errors.Is(err, outage) {
		t.Errorf("Verify with LedgerLen failing = %v, want the outage", err)
	}
	res, err := Verify(ctx, &chains{entries: chain(2), walkErr: outage}, "northwind", nil)
	if !errors.Is(err, outage) || res.OK || res.Break != nil {
		t.Errorf("Verify with WalkLedger failing = %+v, %v, want the outage and no verdict", res, err)
	}
}

// TestVerifyResultJSON: the result is the admin API's answer as it is.
func TestVerifyResultJSON(t *testing.T) {
	for _, c := range []struct {
		res  Result
		want string
	}{
		{Result{OK: true, Checked: 3, Total: 3}, `{"ok":true,"checked":3,"total":3}`},
		{Result{OK: true, Checked: 10, Total: 35, From: 26}, `{"ok":true,"checked":10,"total":35,"from":26}`},
		{Result{Checked: 1, Total: 3, Break: &BreakPoint{Sequence: 2, Reason: "r"}},
			`{"ok":false,"checked":1,"total":3,"first_break":{"sequence":2,"reason":"r"}}`},
	} {
		got, err := json.Marshal(c.res)
		if err != nil || string(got) != c.want {
			t.Errorf("json.Marshal(%+v) = %s, %v, want %s", c.res, got, err, c.want)
		}
	}
}
