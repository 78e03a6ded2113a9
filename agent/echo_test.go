package agent_test

import (
	"bytes"
	"testing"

	"github.com/storefront/storefront/internal/kittest"
	"github.com/storefront/storefront/internal/testenv"
)

// TestReplayEchoesTheRetrysContext: a retry under the same idempotency_key
// replays the first answer, but with the retry's own context, which the
// spec leaves out of payload equivalence (the idempotency storyboard's
// replay step checks its correlation_id): another context replaces the
// first's, none removes it, and one sent only on the retry is added.
func TestReplayEchoesTheRetrysContext(t *testing.T) {
	env := testenv.Start(t)
	cs := kittest.Connect(t, env.BaseURL, env.BuyerToken)
	create := func(key, ctx string) []byte {
		_, got := kittest.Call(t, cs, "create_media_buy", `{"adcp_version":"3.2-beta.5","idempotency_key":"`+key+`",`+
			`"account":{"brand":{"domain":"acme.example"},"operator":"pinnacle-agency.example"},"brand":{"domain":"acme.example"},`+
			`"start_time":"asap","end_time":"2027-03-01T00:00:00Z","packages":[{"product_id":"nw_display_ros_mrec","pricing_option_id":"cpm_usd_floor_ros","budget":5000}]`+ctx+`}`)
		return got
	}
	first := create("echo-create-0000000001", `,"context":{"correlation_id":"first"}`)
	retry := create("echo-create-0000000001", `,"context":{"correlation_id":"retry","n":[1,2]}`)
	want := bytes.Replace(bytes.TrimSuffix(first, []byte("}")), []byte(`"context":{"correlation_id":"first"}`), []byte(`"context":{"correlation_id":"retry","n":[1,2]}`), 1)
	if want = append(want, `,"replayed":true}`...); !bytes.Equal(retry, want) {
		t.Errorf("the retry =\n%s\nwant the first answer with the retry's context, replayed:\n%s", retry, want)
	}
	if m := kittest.Decode(t, create("echo-create-0000000001", "")); m["context"] != nil || m["replayed"] != true || m["media_buy_id"] != kittest.Decode(t, first)["media_buy_id"] {
		t.Errorf("a retry without context = %v, want the first buy replayed with no context", m)
	}
	plain := create("echo-create-0000000002", "")
	m := kittest.Decode(t, create("echo-create-0000000002", `,"context":{"correlation_id":"late"}`))
	if c, _ := m["context"].(map[string]any); c["correlation_id"] != "late" || m["media_buy_id"] != kittest.Decode(t, plain)["media_buy_id"] {
		t.Errorf("a retry that adds a context = %v", m)
	}
}
