package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/storefront/storefront/access"
	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/buying"
	"github.com/storefront/storefront/compliance"
	"github.com/storefront/storefront/demo"
	"github.com/storefront/storefront/internal/spectest"
	"github.com/storefront/storefront/metrics"
	"github.com/storefront/storefront/products"
	"github.com/storefront/storefront/store"
	"github.com/storefront/storefront/store/memstore"
)

// tokenPanics is a store whose token lookup panics, as a nil dereference
// deep in a dependency would: every call with a bearer token reaches it.
type tokenPanics struct{ store.Store }

func (tokenPanics) UseToken(context.Context, store.TokenKind, string, string, time.Time) (store.Token, error) {
	panic("xyzzy-internal-panic-detail")
}

// TestDispatchRecovers: a panic in any tool is answered by Dispatch with
// the error arm, SERVICE_UNAVAILABLE and transient, in the call's
// envelope, showing nothing of the panic; it is counted on the call's
// transport.
func TestDispatchRecovers(t *testing.T) {
	mem := memstore.New()
	if err := demo.Seed(context.Background(), mem, demo.Written); err != nil {
		t.Fatal(err)
	}
	s := tokenPanics{mem}
	log := slog.New(slog.DiscardHandler)
	snaps := store.NewSnapshots(s)
	svc := &products.Service{Snapshots: snaps, Ledger: store.Ledger{Store: s}, Accounts: access.Accounts{Store: s}, Log: log}
	a := agent.New(s, svc, snaps, &compliance.Controller{Store: s, Snaps: snaps, Log: log}, log)
	a.EnableBuying(&buying.Service{Store: s, Snapshots: snaps, Accounts: access.Accounts{Store: s}, Ledger: store.Ledger{Store: s}, Log: log})

	const args = `{"adcp_version":"3.2-beta.5","context":{"trace":"recovered"}}`
	tools := a.Tools()
	before := metrics.RecoveredPanics("a2a")
	for _, tool := range tools {
		r, err := a.Dispatch(context.Background(), tool.Name, agent.Call{Publisher: demo.PublisherID, Authorization: "Bearer sf_buyer_x", Args: []byte(args), Transport: "a2a"})
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if !r.Failed || string(r.Payload) != string(a.InternalReply([]byte(args)).Payload) {
			t.Errorf("%s answered %s, want the internal error arm", tool.Name, r.Payload)
		}
		if strings.Contains(string(r.Payload), "xyzzy") || strings.Contains(r.Summary.String(), "xyzzy") {
			t.Errorf("%s shows the panic: %s", tool.Name, r.Payload)
		}
	}
	if got := metrics.RecoveredPanics("a2a") - before; got != float64(len(tools)) {
		t.Errorf("recovered panics on a2a moved by %v, want %d", got, len(tools))
	}
	payload := a.InternalReply([]byte(args)).Payload
	spectest.GetProducts(t, payload)
	spectest.MediaBuy(t, "create_media_buy", payload)
	var m struct {
		Status    string `json:"status"`
		Version   string `json:"adcp_version"`
		AdcpError struct {
			Code, Message, Recovery string
		} `json:"adcp_error"`
		Context map[string]string `json:"context"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	if m.Status != "failed" || m.Version != "3.2-beta.5" || m.AdcpError.Code != "SERVICE_UNAVAILABLE" || m.AdcpError.Recovery != "transient" ||
		m.AdcpError.Message != "Internal error." || m.Context["trace"] != "recovered" {
		t.Errorf("InternalReply = %s", payload)
	}
}
