package app

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/storefront/storefront/agent"
	"github.com/storefront/storefront/signing"
)

// brandDoc is brand.json's agent form (brand.json, "Brand Agent"): the
// publisher's sales agent endpoints and where their signing keys are.
type brandDoc struct {
	Agents []brandAgent `json:"agents"`
}

// brandAgent is one agents[] entry (brand.json#/definitions/brand_agent_entry).
type brandAgent struct {
	Type        string `json:"type"`
	URL         string `json:"url"`
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	JWKSURI     string `json:"jwks_uri"`
}

var brandIDRE = regexp.MustCompile(`[^a-z0-9]+`)

// brand serves a publisher's brand.json: its MCP and A2A endpoints as
// sales agents, each pointing at the publisher's JWKS (signing.JWKSPath
// under the same base). The URLs are built from the origin the agent card
// uses.
func (s *Server) brand(c echo.Context) error {
	ctx := c.Request().Context()
	base := agent.BaseURL(ctx)
	id := s.cfg.DefaultPublisher
	if p := c.Param("publisher"); p != "" {
		id = p
	}
	snap, err := s.cfg.Agent.Snaps.Snapshot(ctx, id)
	if err != nil {
		s.cfg.Log.WarnContext(ctx, "brand.json: snapshot", "publisher", id, "err", err)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "temporarily unavailable")
	}
	slug := strings.Trim(brandIDRE.ReplaceAllString(strings.ToLower(id), "_"), "_")
	if len(slug) > 90 {
		slug = slug[:90]
	}
	doc := brandDoc{}
	for _, t := range []struct{ path, name, label string }{{"/mcp", "mcp", "MCP"}, {"/a2a", "a2a", "A2A"}} {
		a := brandAgent{Type: "sales", URL: base + t.path, ID: slug + "_" + t.name, JWKSURI: base + signing.JWKSPath}
		if d, ok := snap.Screen.Line("AdCP sales agent for "+snap.Publisher.Name+" over "+t.label+".", 500); ok {
			a.Description = d.String()
		}
		doc.Agents = append(doc.Agents, a)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("Access-Control-Allow-Origin", "*")
	return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, b)
}
