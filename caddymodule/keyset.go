package caddymodule

import (
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/legacy"
)

// keysetMisread returns the engine's OnKeysetMisread for ep: an answer
// showed that the backend ignored or misread backend_keyset for one list
// (records at or below the cursor, or an answer an offset read of the
// same cursor contradicted twice), which is read by offset from then on.
// Each such list counts in backend_keyset_misreads_total; the first of
// the endpoint warns with the Caddyfile line, the others log at info.
func (g *Gateway) keysetMisread(ep *endpoint) func(reason string) {
	return func(reason string) {
		metrics.keysetMisreads.WithLabelValues(ep.name).Inc()
		level := zap.WarnLevel
		if ep.keysetWarned.Swap(true) {
			level = zap.InfoLevel
		}
		if ce := g.logger.Check(level, "backend ignores or misreads backend_keyset: reading that list by offset; check the template against the backend's filter syntax, or remove it"); ce != nil {
			ce.Write(zap.String("endpoint", ep.name), zap.String("reason", reason),
				zap.String("caddyfile", "backend_keyset "+strconv.Quote(g.BackendKeyset)))
		}
	}
}

// checkKeysetQuoting refuses, on a lexical list, a backend_keyset
// template that puts {id} unquoted inside a filter expression, as
// PocketBase's filter=(id>{id}) does. Lexical cursor ids are words: the
// backend would read passwordHash or created as a field name, and the
// pages it answers would tell a client about fields it cannot see. The
// id is a value there only when quoted (filter=(id>'{id}'), the quote of
// either kind on both sides), or when it is the whole value of its
// parameter (id_gt={id}) or follows only an operator (PostgREST's
// id=gt.{id}). On a numeric list cursor ids are whole numbers, which no
// backend reads as a name.
func checkKeysetQuoting(tmpl string, t legacy.KeysetTemplate, lexical bool) error {
	if !lexical || t.Suffix == "" && (t.Prefix == "" || operatorPrefix(t.Prefix)) {
		return nil
	}
	if n := len(t.Prefix); n > 0 {
		if q := t.Prefix[n-1:]; (q == "'" || q == `"`) && strings.HasPrefix(t.Suffix, q) {
			return nil
		}
	}
	return fmt.Errorf("%q puts {id} unquoted inside a filter expression; with id_order lexical the backend would read a cursor id such as passwordHash as a field name: quote it, as in %q",
		tmpl, strings.Replace(tmpl, legacy.KeysetPlaceholder, "'"+legacy.KeysetPlaceholder+"'", 1))
}

// operatorPrefix reports whether a keyset value's text before {id} is an
// operator of PostgREST's form: words each followed by a dot (gt., not.lte.).
func operatorPrefix(s string) bool {
	for word := range strings.SplitSeq(strings.TrimSuffix(s, "."), ".") {
		if word == "" || strings.Trim(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			return false
		}
	}
	return strings.HasSuffix(s, ".")
}
