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

func TestURL(t *testing.T) {
	u, err := url.Parse("http://user:pw@127.0.0.1:8080/calls?apikey=s3cret&_perPage=10")
	assert.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8080/calls?apikey=REDACTED&_perPage=10", URL(u))
}
