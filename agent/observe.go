package agent

import (
	"bytes"
	"slices"
	"time"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/metrics"
)

// observe counts an answered call. It reads what it needs from the answer
// as sent: every answer begins with status and adcp_version, a replay ends
// with "replayed":true, and the error arm's first error code is the first
// "code" member. It costs a few byte searches, not a decode.
func (a *Agent) observe(tool string, c Call, r Reply, took time.Duration) {
	if a.Metrics == nil {
		return
	}
	ans := metrics.Answer{Publisher: c.Publisher, Transport: c.Transport, Tool: tool, Took: took, Arm: "none"}
	head := r.Payload[:min(len(r.Payload), 160)]
	ans.Version = member(head, `"adcp_version":"`)
	switch {
	case r.Failed:
		ans.Arm = "failed"
		ans.Code = member(r.Payload, `"code":"`)
	case tool == "get_products":
		ans.Arm = member(head, `{"status":"`)
	case slices.Contains(decidingBuyTools, tool):
		// A buy's answer is completed unless the order waits for the
		// desk; before 3.2 its status member is the buy's status.
		ans.Arm = "completed"
		if member(head, `{"status":"`) == "submitted" {
			ans.Arm = "submitted"
		}
	}
	if r.Slug != "" {
		ans.Slug = string(r.Slug)
	} else if r.Failed && tool == "get_products" {
		// A decline served to a 3.0 or 3.1 buyer is the error arm with
		// the slug in its details.
		ans.Slug = member(r.Payload, `"slug":"`)
	}
	switch {
	case bytes.HasSuffix(bytes.TrimRight(r.Payload, " \n"), []byte(`"replayed":true}`)):
		ans.Replay = "replayed"
	case ans.Code == string(adcp.IdempotencyConflict):
		ans.Replay = "conflict"
	case ans.Code == string(adcp.IdempotencyInFlight):
		ans.Replay = "in_flight"
	case ans.Code == string(adcp.IdempotencyExpired):
		ans.Replay = "expired"
	}
	a.Metrics.Answered(ans)
}

// member returns the string that follows the first occurrence of prefix
// (a JSON member name, colon and opening quote), up to its closing quote;
// "" when there is none. The values it reads (arms, versions, codes) hold
// no escapes.
func member(b []byte, prefix string) string {
	i := bytes.Index(b, []byte(prefix))
	if i < 0 {
		return ""
	}
	rest := b[i+len(prefix):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}
