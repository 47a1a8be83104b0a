package redisstore

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKeyIDNamesTheKey: equal keys, equal key ids; another key, another
// id; and the id holds nothing of the key.
func TestKeyIDNamesTheKey(t *testing.T) {
	a, b := []byte("0123456789abcdef-one"), []byte("0123456789abcdef-two")
	assert.Equal(t, KeyID(a), KeyID(append([]byte(nil), a...)))
	assert.NotEqual(t, KeyID(a), KeyID(b))
	assert.Len(t, KeyID(a), 12)
	assert.NotContains(t, KeyID(a), "0123")
}

// TestShareSortsTheRegistry: who is a peer, and why the others are not.
func TestShareSortsTheRegistry(t *testing.T) {
	me := Member{Instance: "me", KeyID: "k1", Fingerprint: "f1"}
	for _, tc := range []struct {
		name   string
		me     Member
		others []Member
		peers  []string
		apart  []Apart
	}{
		{"alone", me, []Member{me}, []string{}, nil},
		{"peers", me, []Member{me, {Instance: "b", KeyID: "k1", Fingerprint: "f1"}, {Instance: "a", KeyID: "k1", Fingerprint: "f1"}},
			[]string{"a", "b"}, nil},
		{"another key", me, []Member{{Instance: "b", KeyID: "k2", Fingerprint: "f1"}}, []string{}, []Apart{{"b", ApartKey}}},
		{"another fingerprint", me, []Member{{Instance: "b", KeyID: "k1", Fingerprint: "f2"}}, []string{}, []Apart{{"b", ApartFingerprint}}},
		{"another deployment name, on purpose", Member{Instance: "me", KeyID: "k1", Fingerprint: "f1", Deployment: "prod"},
			[]Member{{Instance: "b", KeyID: "k2", Fingerprint: "f2", Deployment: "staging"}}, []string{}, []Apart{{"b", ApartDeployment}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := Share(tc.me, tc.others)
			assert.Equal(t, tc.peers, sh.PeerInstances)
			assert.Equal(t, len(tc.peers), sh.Peers)
			assert.Equal(t, tc.apart, sh.NotSharing)
			key, fp := sh.Unintended()
			for _, a := range tc.apart {
				switch a.Reason {
				case ApartKey:
					assert.Contains(t, key, a.Instance)
				case ApartFingerprint:
					assert.Contains(t, fp, a.Instance)
				default:
					assert.NotContains(t, append(key, fp...), a.Instance, "apart on purpose warns of nothing")
				}
			}
		})
	}
}
