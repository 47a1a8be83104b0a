// Package redact takes credentials out of queries and URLs before they
// reach a log or a report: clients of help-desk APIs often pass their key
// in the query (apikey=...).
package redact

import (
	"net/url"
	"strings"
)

// secretWords mark query parameters whose values must never reach a log:
// clients of help-desk APIs often pass their key in the query (apikey=...).
var secretWords = []string{"key", "token", "secret", "password", "passwd", "auth", "session", "signature", "sig", "credential"}

// Query returns a query for logs: the values of parameters whose
// names look like credentials are replaced, everything else is kept so an
// operator can still see which backend query failed.
func Query(query string) string {
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

// URL is u for a log or report: no user info, and no credentials in its
// query.
func URL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = Query(c.RawQuery)
	return c.String()
}
