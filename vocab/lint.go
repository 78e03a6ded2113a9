package vocab

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// internalPlaceholders are names a template might reach for that would
// print a confidential part of a rule.
var internalPlaceholders = regexp.MustCompile(`^(rule|rules|notes?|id|name|internal|internal_ref|confidential|confidential_terms|when|condition|threshold|account|principal)([._].*)?$`)

var (
	urlRE      = regexp.MustCompile(`(?i)\b(?:https?|ftp)://|\bwww\.|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|co|uk|us|de|fr|example|info|biz|ly|gl|me|app|dev|ai|tv)\b`)
	markdownRE = regexp.MustCompile("\\*\\*|__|~~|`|\\[[^\\]]*\\]\\(|^\\s{0,3}(?:#{1,6}\\s|>|[-*+]\\s|\\d+\\.\\s)|<[a-zA-Z/!]")
	// Imperative phrasing aimed at a model reading the decline, and role
	// or prompt-delimiter markers.
	injectionRE = regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override|bypass)\b[^.!?]{0,40}\b(?:instructions?|prompts?|messages?|rules|guidelines|context|above|previous|prior)\b` +
		`|\byou\s+are\s+(?:now|no\s+longer)\b|\bact\s+as\b|\bpretend\s+(?:to\s+be|you)\b|\bjailbreak\b|\bdo\s+anything\s+now\b` +
		`|(?:^|[\s"'])(?:system|assistant|user|developer|tool)\s*:|<\|[^|]*\|>|\[/?(?:INST|SYS)\]|<</?SYS>>|#{2,}\s*(?:instruction|system)` +
		`|\b(?:new|updated|hidden)\s+instructions?\b|\bprompt\s+injection\b`)
)

// LintTemplate refuses what a publisher's template must not contain, on top
// of CheckTemplate's structure: placeholders for internal fields, links,
// markdown or markup, control and bidi characters, and instructions aimed
// at a model that reads the decline. Declines are read by buyer agents;
// their text must be plain, public and inert.
func LintTemplate(t string) error {
	if err := CheckTemplate(t); err != nil {
		return err
	}
	for _, r := range t {
		switch {
		case unicode.Is(unicode.Cf, r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069):
			return fmt.Errorf("the template contains an invisible or bidirectional control character (U+%04X)", r)
		case unicode.IsControl(r):
			return fmt.Errorf("the template contains a control character (U+%04X); write it on one line", r)
		}
	}
	if m := urlRE.FindString(t); m != "" {
		return fmt.Errorf("the template contains a link or domain (%q); declines carry no links", m)
	}
	for _, line := range strings.Split(t, "\n") {
		if m := markdownRE.FindString(line); m != "" {
			return fmt.Errorf("the template contains markdown or markup (%q); declines are plain text", strings.TrimSpace(m))
		}
	}
	if m := injectionRE.FindString(t); m != "" {
		return fmt.Errorf("the template contains an instruction aimed at a reader's model (%q); write what the buyer should know, not what an agent should do", strings.TrimSpace(m))
	}
	return nil
}
