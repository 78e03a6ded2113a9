package a2aserver

import (
	"encoding/json"
	"strings"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/vocab"
)

// Extension URIs and the refusal part's media type.
const (
	// ProfileURI is the AdCP v3 A2A profile extension.
	ProfileURI = "https://adcontextprotocol.org/extensions/adcp/v3"
	// RefusalURI is the refusal extension (seeds/000): the card publishes
	// the decline vocabulary under it, and an activated call gets a typed
	// refusal part with each decline.
	RefusalURI = "https://standards.upperhandai.com/ext/refusals/v1"
	// RefusalMediaType is the media type of the refusal data part.
	RefusalMediaType = "application/vnd.upperhand.refusal+json"
)

// Protocol versions the card lists. The 0.3 card field carries the
// version as 0.3 clients write it; interfaces carry what a2a-go matches on.
const (
	v10       = "1.0"
	v03       = "0.3"
	v03Legacy = "0.3.0"
)

// RefusalRules is the refusal extension's params: every published decline
// slug in kebab case, mapped to its one-line public reason. It is generated
// from the vocabulary and never edited by hand; only public slugs are in
// it, never a rulebook's internal rule ids.
func RefusalRules() map[string]string {
	entries := vocab.Vocabulary()
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.Slug.Kebab()] = e.Reason
	}
	return out
}

// CardInfo is what one publisher's card is built from.
type CardInfo struct {
	// Endpoint is the absolute URL of the JSON-RPC endpoint.
	Endpoint string
	// Name and Description are screened, buyer-visible text.
	Name, Description string
	// Version is the storefront build.
	Version string
	// Tools are the agent's tools; each becomes a skill with the tool's
	// name as its id.
	Tools []agent.Tool
}

// The card is written from these types rather than a2a-go's: a2a-go drops
// "required": false (omitempty), and the card must serve 1.0 and 0.3
// clients at once (the 0.3 fields url, protocolVersion and
// preferredTransport next to the 1.0 supportedInterfaces).
type card struct {
	Name                string      `json:"name"`
	Description         string      `json:"description"`
	Version             string      `json:"version"`
	URL                 string      `json:"url"`
	ProtocolVersion     string      `json:"protocolVersion"`
	PreferredTransport  string      `json:"preferredTransport"`
	SupportedInterfaces []iface     `json:"supportedInterfaces"`
	Capabilities        caps        `json:"capabilities"`
	DefaultInputModes   []string    `json:"defaultInputModes"`
	DefaultOutputModes  []string    `json:"defaultOutputModes"`
	Skills              []cardSkill `json:"skills"`
}

type iface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	ProtocolVersion string `json:"protocolVersion"`
}

type caps struct {
	Streaming         bool        `json:"streaming"`
	PushNotifications bool        `json:"pushNotifications"`
	Extensions        []extension `json:"extensions"`
}

type extension struct {
	URI         string            `json:"uri"`
	Description string            `json:"description"`
	Required    bool              `json:"required"`
	Params      map[string]string `json:"params,omitempty"`
}

type cardSkill struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
	InputModes  []string `json:"inputModes"`
	OutputModes []string `json:"outputModes"`
}

var jsonOnly = []string{"application/json"}

// BuildCard writes the agent card for one publisher.
func BuildCard(in CardInfo) ([]byte, error) {
	c := card{
		Name:               in.Name,
		Description:        in.Description,
		Version:            in.Version,
		URL:                in.Endpoint,
		ProtocolVersion:    v03Legacy,
		PreferredTransport: "JSONRPC",
		SupportedInterfaces: []iface{
			{URL: in.Endpoint, ProtocolBinding: "JSONRPC", ProtocolVersion: v10},
			{URL: in.Endpoint, ProtocolBinding: "JSONRPC", ProtocolVersion: v03},
		},
		Capabilities: caps{Extensions: []extension{
			{
				URI:         ProfileURI,
				Description: "AdCP structured task invocation profile. Required on A2A 1.0 (activate it with A2A-Extensions); A2A 0.3 calls are served under it implicitly.",
				Required:    true,
			},
			{
				URI:         RefusalURI,
				Description: "Declines this seller may give, keyed by rule. A decline is a successful exchange: the task completes with the AdCP rejected arm in artifacts[0]. Activate the extension to also get a typed refusal part in the task's status message.",
				Required:    false,
				Params:      RefusalRules(),
			},
		}},
		DefaultInputModes:  jsonOnly,
		DefaultOutputModes: jsonOnly,
		Skills:             make([]cardSkill, 0, len(in.Tools)),
	}
	for _, t := range in.Tools {
		c.Skills = append(c.Skills, cardSkill{
			ID: t.Name, Name: skillName(t.Name), Description: t.Description,
			Tags: []string{"adcp"}, InputModes: jsonOnly, OutputModes: jsonOnly,
		})
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// skillName is a task name as words: get_adcp_capabilities -> "Get AdCP
// capabilities".
func skillName(task string) string {
	words := strings.Split(task, "_")
	for i, w := range words {
		switch {
		case w == "adcp":
			words[i] = "AdCP"
		case i == 0 && w != "":
			words[i] = strings.ToUpper(w[:1]) + w[1:]
		}
	}
	return strings.Join(words, " ")
}
