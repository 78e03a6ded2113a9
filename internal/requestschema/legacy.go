package requestschema

import (
	"regexp"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// relaxation is a shape 3.0 or 3.1 defines that the embedded release's
// schema refuses: a request served as one of those releases may carry it.
// The list comes from comparing each served task's request schema, member
// by member, in the embedded release and in 3.0.6 (the release the
// @adcp/sdk 6.11.0 client bundles); 3.1's differences from 3.0 only add
// members. The README lists them.
type relaxation struct {
	task []string
	// at matches the pointer of the value the embedded schema refuses.
	at *regexp.Regexp
	// allow says whether the refusal is one the older release does not
	// make.
	allow func(k jsonschema.ErrorKind) bool
}

var relaxations = []relaxation{
	{
		// 3.2 dropped video_completions from the reportable metrics.
		task: []string{"create_media_buy", "update_media_buy"},
		at:   regexp.MustCompile(`^/reporting_webhook/requested_metrics/[0-9]+$`),
		allow: func(k jsonschema.ErrorKind) bool {
			e, ok := k.(*kind.Enum)
			return ok && e.Got == "video_completions"
		},
	},
	{
		// 3.0 allowed up to ten governance agents an account; the task
		// itself refuses more than the one this seller binds.
		task: []string{"sync_governance"},
		at:   regexp.MustCompile(`^/accounts/[0-9]+/governance_agents$`),
		allow: func(k jsonschema.ErrorKind) bool {
			m, ok := k.(*kind.MaxItems)
			return ok && m.Got <= 10
		},
	},
	{
		// 3.0 let a governance agent name the categories it governs.
		task: []string{"sync_governance"},
		at:   regexp.MustCompile(`^/accounts/[0-9]+/governance_agents/[0-9]+$`),
		allow: func(k jsonschema.ErrorKind) bool {
			a, ok := k.(*kind.AdditionalProperties)
			if !ok {
				return false
			}
			for _, p := range a.Properties {
				if p != "categories" {
					return false
				}
			}
			return true
		},
	},
}

// relaxed reports whether e is a refusal a legacy release does not make.
func relaxed(task string, e *jsonschema.ValidationError) bool {
	at := pointer(e.InstanceLocation)
	for _, r := range relaxations {
		for _, t := range r.task {
			if t == task && r.at.MatchString(at) && r.allow(e.ErrorKind) {
				return true
			}
		}
	}
	return false
}
