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
// A name holding one of them anywhere, in any case, is a credential's:
// api_key, access_token, client_secret, X-Auth, PHPSESSID, id_token,
// _csrf (a session-bound token), SAMLResponse (a signed assertion).
var secretWords = []string{
	"key", "token", "secret", "password", "passwd", "pass", "pwd",
	"auth", "session", "sessid", "signature", "sig", "credential",
	"jwt", "bearer", "cookie", "nonce", "totp", "assertion", "private",
	"csrf", "xsrf", "saml",
}

// secretTokens are short credential names that are too common inside
// other words to match anywhere ("sid" is in "inside"): a name matches
// when one of its parts is the token, parts split at anything not a
// letter or digit and at a lower-to-upper case change (user_sid,
// sessionSid, SID, pin).
var secretTokens = []string{"sid", "pw", "pin", "otp", "cred", "creds", "hmac"}

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
	lower := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && isAlnum(name[i]) && (i == 0 || !isLower(name[i-1]) || !isUpper(name[i])) {
			continue
		}
		if part := lower[start:i]; part != "" {
			for _, w := range secretTokens {
				if part == w {
					return true
				}
			}
		}
		start = i
		if i < len(name) && !isAlnum(name[i]) {
			start = i + 1
		}
	}
	return false
}

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isAlnum(c byte) bool { return isLower(c) || isUpper(c) || '0' <= c && c <= '9' }

// URL is u for a log or report: no user info, and no credentials in its
// query.
func URL(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery = Query(c.RawQuery)
	return c.String()
}
