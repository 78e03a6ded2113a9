package bench

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/storefront/storefront/merch"
	"github.com/storefront/storefront/products"
)

// Request is one get_products call in the mix: its tool arguments, the
// arm the storefront is expected to answer with, and the exact JSON-RPC
// body sent for it over MCP (Body) and over A2A (A2ABody, a message with
// one data part naming the skill). The bodies are fixed, ids included, so
// the ceiling can answer them from a table.
type Request struct {
	Name    string
	Arm     string
	Args    json.RawMessage
	Body    []byte
	A2ABody []byte
}

// The mix: briefs the generated publisher serves, and briefs its demo rules
// decline. Completed requests outnumber rejected ones 7 to 3.
var (
	completedArgs = []struct{ name, args string }{
		{"olv coffee", `{"brief":"Video pre-roll for a coffee launch","filters":{"channels":["olv"],"budget_range":{"max":50000,"currency":"USD"},"countries":["US"]},"pagination":{"max_results":10}}`},
		{"display travel", `{"brief":"Display banners for a travel brand, weekend and mobile","filters":{"channels":["display"],"budget_range":{"max":20000,"currency":"USD"}},"pagination":{"max_results":10}}`},
		{"audio sports", `{"brief":"Streaming audio for a sports drink","filters":{"channels":["streaming_audio"],"budget_range":{"max":30000,"currency":"USD"}},"pagination":{"max_results":10}}`},
		{"food cross-channel", `{"brief":"Food content sponsorship across display and video","filters":{"channels":["display","olv"],"budget_range":{"max":30000,"currency":"USD"}},"pagination":{"max_results":10}}`},
		{"news reach", `{"brief":"Reach news readers in the United States and Canada","filters":{"budget_range":{"max":100000,"currency":"USD"}},"pagination":{"max_results":10}}`},
		{"finance display", `{"brief":"Finance app install campaign on premium homepage placements","filters":{"channels":["display"],"budget_range":{"max":40000,"currency":"USD"},"countries":["US"]},"pagination":{"max_results":10}}`},
		{"fitness video", `{"brief":"Fitness brand video, evening audiences","filters":{"channels":["olv"],"budget_range":{"max":60000,"currency":"USD"}},"pagination":{"max_results":10}}`},
	}
	rejectedArgs = []struct{ name, args string }{
		{"budget too small", `{"brief":"Video pre-roll for a coffee launch","filters":{"channels":["olv"],"budget_range":{"max":300,"currency":"USD"}},"pagination":{"max_results":10}}`},
		{"channel not offered", `{"brief":"Billboards near stadiums","filters":{"channels":["dooh"],"budget_range":{"max":50000,"currency":"USD"}},"pagination":{"max_results":10}}`},
		{"market not served", `{"brief":"Display for a bakery in Lyon","filters":{"channels":["display"],"countries":["FR"],"budget_range":{"max":20000,"currency":"USD"}},"pagination":{"max_results":10}}`},
	}
)

// Mix builds the request mix for an AdCP version, in the order the load
// generator cycles through: ten slots, seven completed and three rejected,
// interleaved.
func Mix(version string) []Request {
	var out []Request
	c, r := 0, 0
	for slot := range 10 {
		var name, args, arm string
		if slot%3 == 2 && r < len(rejectedArgs) {
			name, args, arm = rejectedArgs[r].name, rejectedArgs[r].args, "rejected"
			r++
		} else {
			name, args, arm = completedArgs[c].name, completedArgs[c].args, "completed"
			c++
		}
		out = append(out, newRequest(len(out)+1, name, arm, withVersion(args, version)))
	}
	return out
}

func withVersion(args, version string) string {
	if version == "" {
		return args
	}
	return `{"adcp_version":"` + version + `","buying_mode":"brief",` + args[1:]
}

func newRequest(id int, name, arm, args string) Request {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"get_products","arguments":%s}}`, id, args)
	a2a := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"SendMessage","params":{"message":{"messageId":"bench-%d","role":"ROLE_USER","parts":[{"data":{"skill":"get_products","input":%s}}]}}}`, id, id, args)
	return Request{Name: name, Arm: arm, Args: json.RawMessage(args), Body: []byte(body), A2ABody: []byte(a2a)}
}

// Briefs are the mix's requests as the products service normalises them
// for rule evaluation on the day of now.
func Briefs(now time.Time) ([]merch.Brief, error) {
	var out []merch.Brief
	for _, r := range Mix("3.2-beta.5") {
		req, err := products.DecodeRequest(r.Args)
		if err != nil {
			return nil, fmt.Errorf("mix request %s: %w", r.Name, err)
		}
		out = append(out, products.NormaliseBrief(req, now))
	}
	return out, nil
}
