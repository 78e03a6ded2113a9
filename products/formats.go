package products

import (
	"encoding/json"
	"fmt"
)

// CreativeAgent is the AAO-hosted agent whose registry names the standard
// v1 formats.
const CreativeAgent = "https://creative.adcontextprotocol.org"

// FormatID is a legacy named-format reference (core/format-id.json).
type FormatID struct {
	AgentURL string `json:"agent_url"`
	ID       string `json:"id"`
}

// LegacyFormatIDs projects the product's canonical format options onto the
// deprecated format_ids that buyers on older 3.x releases read, following
// the AAO registry's naming (display_300x250_image, video_vast_30s,
// audio_standard_30s ...). Options with no clean v1 counterpart are left
// out rather than given invented ids.
func (p *Product) LegacyFormatIDs() []FormatID {
	var out []FormatID
	seen := map[string]bool{}
	for _, f := range p.FormatOptions {
		params := paramsOf(f)
		secs := params.durationMS() / 1000
		id := ""
		switch f.FormatKind {
		case "image":
			if params.Width > 0 && params.Height > 0 {
				id = fmt.Sprintf("display_%dx%d_image", params.Width, params.Height)
			}
		case "html5":
			if params.Width > 0 && params.Height > 0 {
				id = fmt.Sprintf("display_%dx%d_html", params.Width, params.Height)
			}
		case "display_tag":
			id = "display_js"
		case "video_vast":
			if secs > 0 {
				id = fmt.Sprintf("video_vast_%ds", secs)
			}
		case "video_hosted":
			if secs > 0 {
				id = fmt.Sprintf("video_standard_%ds", secs)
			}
		case "audio_hosted":
			if secs > 0 {
				id = fmt.Sprintf("audio_standard_%ds", secs)
			}
		}
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, FormatID{AgentURL: CreativeAgent, ID: id})
		}
	}
	return out
}

// formatParams are the size and duration a format option's params give.
type formatParams struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Exact  int    `json:"duration_ms_exact"`
	Range  []*int `json:"duration_ms_range"`
}

func paramsOf(f FormatOption) formatParams {
	var params formatParams
	_ = json.Unmarshal(f.Params, &params)
	return params
}

// durationMS is the exact duration, else the range's upper bound, else 0.
func (fp formatParams) durationMS() int {
	if fp.Exact == 0 && len(fp.Range) == 2 && fp.Range[1] != nil {
		return *fp.Range[1]
	}
	return fp.Exact
}
