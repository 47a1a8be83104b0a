package redisstore_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/redisstore"
)

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct {
		raw      string
		want     redisstore.Address
		redacted string
	}{
		{"redis://127.0.0.1:6379/2", redisstore.Address{Kind: redisstore.Single, Scheme: "redis", Hosts: []string{"127.0.0.1:6379"}, DB: 2},
			"redis://127.0.0.1:6379/2"},
		{"rediss://u:p%40ss@redis.internal:6380/0?dial_timeout=1s", redisstore.Address{Kind: redisstore.Single, Scheme: "rediss", TLS: true,
			Hosts: []string{"redis.internal:6380"}, Username: "u", Password: "p@ss", Query: "dial_timeout=1s"},
			"rediss://u:xxxxx@redis.internal:6380/0?dial_timeout=1s"},
		{"redis+cluster://a:7000,b:7001,[::1]:7002", redisstore.Address{Kind: redisstore.Cluster, Scheme: "redis+cluster",
			Hosts: []string{"a:7000", "b:7001", "[::1]:7002"}}, "redis+cluster://a:7000,b:7001,[::1]:7002"},
		{"rediss+cluster://:secret@a:7000/", redisstore.Address{Kind: redisstore.Cluster, Scheme: "rediss+cluster", TLS: true,
			Hosts: []string{"a:7000"}, Password: "secret"}, "rediss+cluster://:xxxxx@a:7000"},
		{"redis+sentinel://s1,s2:26380/mymaster", redisstore.Address{Kind: redisstore.Sentinel, Scheme: "redis+sentinel",
			Hosts: []string{"s1:26379", "s2:26380"}, Master: "mymaster"}, "redis+sentinel://s1:26379,s2:26380/mymaster"},
		{"rediss+sentinel://hdgw:pw/with/slash@s1:26379/mymaster/3?sentinel_auth=same", redisstore.Address{Kind: redisstore.Sentinel,
			Scheme: "rediss+sentinel", TLS: true, Hosts: []string{"s1:26379"}, Username: "hdgw", Password: "pw/with/slash",
			Master: "mymaster", DB: 3, SentinelAuth: true}, "rediss+sentinel://hdgw:xxxxx@s1:26379/mymaster/3?sentinel_auth=same"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			a, err := redisstore.ParseAddress(tc.raw)
			require.NoError(t, err)
			assert.Equal(t, tc.want, a)
			assert.Equal(t, tc.redacted, a.Redacted())
		})
	}
	for _, tc := range []struct{ raw, err string }{
		{"127.0.0.1:6379", "not a URL"},
		{"http://u:hunter2@h:1", `the scheme "http"`},
		{"redis+ring://h:1", `the scheme "redis+ring"`},
		{"redis://h1:1,h2:2/0", "several hosts"},
		{"redis+cluster://u:hunter2@h1:1,,h2:2", "an empty host"},
		{"redis+cluster://h1:1/3", "database 0 only"},
		{"redis+cluster://h1:1?max_redirects=3", `"max_redirects" means nothing`},
		{"redis+sentinel://u:hunter2@s1:26379", "names no master"},
		{"redis+sentinel://s1:26379/m/x", `the database "x"`},
		{"redis+sentinel://s1:26379/m?sentinel_auth=yes", `sentinel_auth is "same"`},
		{"redis://u:hunter2@h:99999/0", "from 1 to 65535"},
		{"redis://u:hunter2@/0", "names no host"},
		{"redis://u:hun%zzter2@h/0", "password is not escaped"},
		{"redis://h/0?password=hunter2", "not in the query"},
		{"redis://u:hunter2@[::1:6379/0", `the host "[::1:6379"`},
		{"redis://u:hunter2@::1:6379/0", "write an IPv6 address in brackets"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			_, err := redisstore.ParseAddress(tc.raw)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.NotContains(t, err.Error(), "hunter2")
			assert.NotContains(t, redisstore.Redact(tc.raw), "hunter2")
		})
	}
}

// FuzzParseAddress: whatever an operator writes, ParseAddress neither
// panics nor quotes the password in an error, and what it reads is
// shown redacted and read back the same.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"redis://127.0.0.1:6379/0",
		"rediss://user:password@host:6380/0",
		"redis+cluster://user:password@a:7000,b:7001",
		"rediss+sentinel://:password@s1,s2:26380/mymaster/1?sentinel_auth=same",
		"redis+sentinel://u:p@ss@s1/m",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := redisstore.ParseAddress(raw)
		secret := ""
		if i, j := strings.Index(raw, "://"), strings.LastIndex(raw, "@"); i >= 0 && j > i {
			if _, p, ok := strings.Cut(raw[i+3:j], ":"); ok {
				secret = p
			}
		}
		// A password also written elsewhere in the URL may be quoted
		// from there: only one that is not is held to it.
		hidden := len(secret) >= 4 && strings.Count(raw, secret) == 1
		if hidden {
			assert.NotContains(t, redisstore.Redact(raw), secret)
		}
		if err != nil {
			if hidden && strings.Contains(err.Error(), secret) {
				// Only where it comes from the password: the same URL
				// with another password of its length gives an error
				// without it.
				_, err2 := redisstore.ParseAddress(strings.Replace(raw, secret, strings.Repeat("Q", len(secret)), 1))
				assert.True(t, err2 != nil && strings.Contains(err2.Error(), secret), "the error quotes the password: %v", err)
			}
			return
		}
		red := a.Redacted()
		if hidden && a.Password != "" {
			assert.NotContains(t, red, a.Password)
		}
		b, err := redisstore.ParseAddress(red)
		require.NoError(t, err, red)
		if a.Password != "" {
			a.Password = "xxxxx"
		}
		assert.Equal(t, a, b, red)
	})
}
