package caddymodule

import (
	"net/url"
	"strings"
)

// secretWords mark query parameters whose values must never reach a log:
// clients of help-desk APIs often pass their key in the query (apikey=...).
var secretWords = []string{"key", "token", "secret", "password", "passwd", "auth", "session", "signature", "sig", "credential"}

// redactQuery returns a query for logs: the values of parameters whose
// names look like credentials are replaced, everything else is kept so an
// operator can still see which backend query failed.
func redactQuery(query string) string {
	var b strings.Builder
	b.Grow(len(query))
	for i, pair := range strings.Split(query, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		rawKey, _, hasValue := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			key = rawKey
		}
		if hasValue && isSecretName(key) {
			b.WriteString(rawKey)
			b.WriteString("=REDACTED")
			continue
		}
		b.WriteString(pair)
	}
	return b.String()
}

func isSecretName(name string) bool {
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
