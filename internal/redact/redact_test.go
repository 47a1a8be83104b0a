package redact

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRedactQuery(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"apikey=s3cret&status=open&_page=2", "apikey=REDACTED&status=open&_page=2"},
		{"api_key=a&access_token=b&X-Auth=c&Password=d&sig=e", "api_key=REDACTED&access_token=REDACTED&X-Auth=REDACTED&Password=REDACTED&sig=REDACTED"},
		{"%61pikey=s3cret", "%61pikey=REDACTED"},
		{"keyless", "keyless"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, Query(tc.in))
		assert.NotContains(t, Query(tc.in), "s3cret")
	}
}

// TestRedactCredentialNames: each common credential name, as a name of
// its own and inside a longer one, has its value replaced; names that
// only look alike are kept, so that a failing query stays readable.
func TestRedactCredentialNames(t *testing.T) {
	for _, name := range []string{
		"key", "apikey", "api_key", "X-Api-Key",
		"token", "access_token", "refresh_token", "id_token",
		"secret", "client_secret",
		"password", "Password", "passwd", "pass", "user_pass", "pwd", "db_pwd",
		"auth", "X-Auth", "authorization", "oauth_verifier",
		"session", "sessionId", "sessid", "PHPSESSID",
		"sid", "SID", "user_sid", "sessionSid", "sid[]",
		"signature", "sig", "X-Amz-Signature",
		"credential", "credentials", "cred", "creds",
		"jwt", "JWT", "jwt_token",
		"bearer", "bearer_token",
		"cookie", "nonce", "otp", "totp", "assertion", "client_assertion",
		"private", "private_data", "pw", "new_pw", "pin", "hmac",
		"%70wd", "%6Awt", "%73id",
		"_csrf", "csrf", "X-CSRF", "xsrf", "_xsrf", "SAMLResponse", "saml_request",
	} {
		t.Run(name, func(t *testing.T) {
			got := Query("status=open&" + name + "=s3cret&_page=2")
			assert.Equal(t, "status=open&"+name+"=REDACTED&_page=2", got)
			assert.NotContains(t, got, "s3cret")
		})
	}
	for _, name := range []string{"status", "inside", "side", "footprint", "consider", "pinned_only", "spin", "opinion", "page", "_perPage", "sort", "filters", "_filters", "type"} {
		t.Run("kept "+name, func(t *testing.T) {
			assert.Equal(t, name+"=v&x=1", Query(name+"=v&x=1"))
		})
	}
}

func TestURL(t *testing.T) {
	u, err := url.Parse("http://user:pw@127.0.0.1:8080/calls?apikey=s3cret&_perPage=10")
	assert.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8080/calls?apikey=REDACTED&_perPage=10", URL(u))
}
