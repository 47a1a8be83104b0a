// Package helptext lays out the help texts of the gateway's commands
// (caddy helpdesk ...) for a terminal: lines of at most 78 columns,
// wrapped between words or items, so that a list of codes reads as one
// column of "code meaning" items wherever the terminal is.
package helptext

import (
	"strings"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// Codes writes one parameter's codes for a help text: its name, then
// "code meaning" items, wrapped between items and indented.
func Codes(param string, codes []ticketfilter.Code) string {
	items := make([]string, len(codes))
	for i, c := range codes {
		items[i] = c.Code + " " + c.Meaning
		if i < len(codes)-1 {
			items[i] += ","
		}
	}
	return Tokens(append([]string{"  " + param + ":"}, items...), "    ")
}

// Words wraps a sentence at its spaces.
func Words(text, indent string) string { return Tokens(strings.Fields(text), indent) }

// Tokens joins tokens with spaces into lines of at most 78 columns
// where it can, the lines after the first indented by indent, and ends
// the text with a newline.
func Tokens(tokens []string, indent string) string {
	var b strings.Builder
	line := ""
	for _, tok := range tokens {
		switch {
		case line == "":
			line = tok
		case len(line)+1+len(tok) > 78:
			b.WriteString(line + "\n")
			line = indent + tok
		default:
			line += " " + tok
		}
	}
	b.WriteString(line + "\n")
	return b.String()
}
