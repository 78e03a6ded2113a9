package products

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/storefront/storefront/adcp"
	"github.com/storefront/storefront/jsonfield"
)

// FormatOptionRef is one filters.format_option_refs entry
// (core/format-option-ref.json): a product-local option named by its
// format_option_id, or a publisher-catalogue option named by publisher
// domain and id.
type FormatOptionRef struct {
	Scope           string
	PublisherDomain string
	FormatOptionID  string
}

// FormatRef is one filters.format_ids entry: a legacy named format
// (core/format-id.json), optionally parameterised by size or duration.
type FormatRef struct {
	// AgentURL is canonicalised, so equal URLs compare equal.
	AgentURL      string
	ID            string
	Width, Height int
	DurationMS    float64
}

var formatIDRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func decodeFormatOptionRefs(o jsonfield.Object) []FormatOptionRef {
	var out []FormatOptionRef
	for _, e := range objectList(o, "format_option_refs") {
		path := e.Path
		r := FormatOptionRef{Scope: e.Str("scope"), FormatOptionID: e.Str("format_option_id"), PublisherDomain: e.Str("publisher_domain")}
		switch r.Scope {
		case "product":
			if e.Has("publisher_domain") {
				invalid(o.Reader, path+".publisher_domain", "a product-scoped reference names no publisher_domain; use scope publisher for a publisher catalogue option")
			}
		case "publisher":
			if r.PublisherDomain == "" {
				invalid(o.Reader, path+".publisher_domain", "a publisher-scoped reference needs publisher_domain")
			} else if !adcp.IsDomain(r.PublisherDomain) {
				invalid(o.Reader, path+".publisher_domain", "publisher_domain must be a lower-case domain name")
			}
		case "":
			invalid(o.Reader, path+".scope", "scope is required (product or publisher)")
		default:
			invalid(o.Reader, path+".scope", fmt.Sprintf("scope must be product or publisher, not %q", r.Scope))
		}
		if r.FormatOptionID == "" {
			invalid(o.Reader, path+".format_option_id", "format_option_id is required")
		} else {
			checkIdentifier(o.Reader, path+".format_option_id", "format_option_id", r.FormatOptionID)
		}
		out = append(out, r)
	}
	return out
}

func decodeFormatRefs(o jsonfield.Object) []FormatRef {
	var out []FormatRef
	for _, e := range objectList(o, "format_ids") {
		path := e.Path
		r := FormatRef{ID: e.Str("id")}
		agent := e.Str("agent_url")
		switch canon, err := canonicalURL(agent); {
		case agent == "":
			invalid(o.Reader, path+".agent_url", "agent_url is required")
		case err != nil:
			invalid(o.Reader, path+".agent_url", "agent_url must be an absolute http(s) URL")
		default:
			r.AgentURL = canon
		}
		if !formatIDRE.MatchString(r.ID) || len(r.ID) > maxIdentifier {
			invalid(o.Reader, path+".id", "id is required: letters, digits, _ and -")
		}
		if e.Has("width") || e.Has("height") {
			r.Width, r.Height = e.Int("width"), e.Int("height")
			if r.Width < 1 || r.Height < 1 {
				invalid(o.Reader, path, "width and height go together, each at least 1")
			}
		}
		if e.Has("duration_ms") {
			r.DurationMS = e.Number("duration_ms")
			if r.DurationMS < 1 {
				invalid(o.Reader, path+".duration_ms", "duration_ms must be at least 1")
			}
		}
		if e.Has("pixel_ratio") {
			// The catalogue's legacy projection names 1x variants only.
			if v := e.Number("pixel_ratio"); v <= 0 {
				invalid(o.Reader, path+".pixel_ratio", "pixel_ratio must be greater than 0")
			} else if r.Width == 0 {
				invalid(o.Reader, path+".pixel_ratio", "pixel_ratio needs width and height")
			} else if v != 1 {
				r.ID = "" // matches no projected format
			}
		}
		out = append(out, r)
	}
	return out
}

// objectList decodes the list at k: at least one and at most MaxListItems
// objects. Entries that are not objects are reported and left out.
func objectList(o jsonfield.Object, k string) []jsonfield.Object {
	raws, ok := o.List(k)
	if !ok {
		return nil
	}
	field := o.At(k)
	if len(raws) == 0 {
		invalid(o.Reader, field, field+" must not be empty")
	}
	if len(raws) > MaxListItems {
		invalid(o.Reader, field, fmt.Sprintf("%s lists %d items; the limit is %d", field, len(raws), MaxListItems))
		return nil
	}
	out := make([]jsonfield.Object, 0, len(raws))
	for i, raw := range raws {
		if e, ok := o.Reader.Object(raw, fmt.Sprintf("%s[%d]", field, i)); ok {
			out = append(out, e)
		}
	}
	return out
}

// canonicalURL applies the parts of AdCP's URL canonicalisation that
// format_id comparison needs: lower-case scheme and host, no userinfo,
// no default port, "/" for an empty path, no fragment.
func canonicalURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Hostname() == "" {
		return "", fmt.Errorf("not an absolute http(s) URL: %q", s)
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if p := u.Port(); p != "" && !(scheme == "https" && p == "443") && !(scheme == "http" && p == "80") {
		host += ":" + p
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	out := scheme + "://" + host + path
	if u.ForceQuery || u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out, nil
}

// formatKey names a legacy format for the index.
func formatKey(agentURL, id string) string { return agentURL + "\x00" + id }

// legacyFormats are the product's published format_ids with the option
// each was projected from, keyed for the index.
func (p *Product) legacyFormats() map[string][]FormatOption {
	out := map[string][]FormatOption{}
	for _, f := range p.FormatOptions {
		ids := (&Product{FormatOptions: []FormatOption{f}}).LegacyFormatIDs()
		for _, id := range ids {
			canon, err := canonicalURL(id.AgentURL)
			if err != nil {
				continue
			}
			k := formatKey(canon, id.ID)
			out[k] = append(out[k], f)
		}
	}
	return out
}

// satisfies reports whether option f is the variant a parameterised
// format reference names: its size or duration, when the reference gives
// one, must be the option's.
func (r FormatRef) satisfies(f FormatOption) bool {
	if r.Width == 0 && r.DurationMS == 0 {
		return true
	}
	params := paramsOf(f)
	if r.Width != 0 && (params.Width != r.Width || params.Height != r.Height) {
		return false
	}
	return r.DurationMS == 0 || float64(params.durationMS()) == r.DurationMS
}

// formatOptionPass is the products accepting any of refs. Product-scoped
// references match a product's own format_options by format_option_id.
// The catalogue holds product-local options only (a format option has no
// publisher_domain), so a publisher-catalogue reference matches none.
func (c *Catalogue) formatOptionPass(sc *scratch, refs []FormatOptionRef) bitset {
	x := c.index
	out := sc.set(x.n)
	for _, r := range refs {
		if r.Scope != "product" {
			continue
		}
		if b, ok := x.formatOption[r.FormatOptionID]; ok {
			out.or(b)
		}
	}
	return out
}

// formatIDPass is the products whose published format_ids include any of
// refs: the same agent URL (canonicalised) and id and, for a parameterised
// reference, the size or duration of the option the id was projected from.
func (c *Catalogue) formatIDPass(sc *scratch, refs []FormatRef) bitset {
	x := c.index
	out := sc.set(x.n)
	for _, r := range refs {
		key := formatKey(r.AgentURL, r.ID)
		b, ok := x.legacyFormat[key]
		if !ok {
			continue
		}
		if r.Width == 0 && r.DurationMS == 0 {
			out.or(b)
			continue
		}
		b.each(func(i int) bool {
			if out.has(i) {
				return true
			}
			for _, f := range c.entries[i].p.legacyFormats()[key] {
				if r.satisfies(f) {
					out.set(i)
					break
				}
			}
			return true
		})
	}
	return out
}
