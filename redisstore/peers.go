package redisstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Who shares. Two instances share entries only when they hold the same
// secret (readahead_store_key) and the same deployment (keys.go); an
// instance that holds another one shares nothing, and nothing in a page
// shows it: its walks only cost a backend call a page. So every instance
// says in the store who it is, and reads back who else is there:
//
//	hdgw:{instances}:seen   a sorted set: each instance, scored by when its
//	                        entry expires, in the store's milliseconds
//	hdgw:{instances}:info   a hash: each instance's Member, as JSON
//
// One pair of keys for the whole store, whatever deployments share it, so
// that an instance that shares with none sees the others, and why: another
// key id (a digest of the secret, never the secret), or the same key id
// and another deployment fingerprint. Each Heartbeat is one round trip
// (heartbeatScript), on the store's clock.

// Member is one instance as the store's registry holds it.
type Member struct {
	Instance string `json:"instance"`
	// KeyID is KeyID of the instance's secret.
	KeyID string `json:"key_id"`
	// Fingerprint is the instance's deployment fingerprint, as its admin
	// endpoint shows it; Deployment the deployment option, when set.
	Fingerprint string `json:"fingerprint"`
	Deployment  string `json:"deployment,omitempty"`
}

// Why an instance on the store shares nothing with this one
// (Apart.Reason).
const (
	// ApartKey: another readahead_store_key (another key id).
	ApartKey = "key"
	// ApartFingerprint: the same key, another deployment fingerprint (its
	// options, or the backend its config reaches, differ).
	ApartFingerprint = "fingerprint"
	// ApartDeployment: another deployment name, set on both: apart on
	// purpose.
	ApartDeployment = "deployment"
)

// Apart is an instance on the store that this one shares nothing with.
type Apart struct {
	Instance string `json:"instance"`
	Reason   string `json:"reason"`
}

// Sharing is what an instance knows of the instances it shares entries
// with, from its last heartbeat.
type Sharing struct {
	Instance string `json:"instance"`
	KeyID    string `json:"key_id"`
	// Peers counts the other instances that heartbeat within the last
	// HeartbeatTTL with the same key id and fingerprint: those whose
	// walks this one continues, and they its; PeerInstances names them.
	Peers         int      `json:"peers"`
	PeerInstances []string `json:"peer_instances"`
	// NotSharing are the other instances on the store whose entries this
	// one never reads, and why.
	NotSharing []Apart `json:"not_sharing,omitempty"`
	// Checked is when the store last answered a heartbeat; zero before.
	Checked time.Time `json:"checked,omitzero"`
}

// HeartbeatTTL is how long an instance's entry in the registry lives
// after its last heartbeat: three of the longest heartbeat intervals, so
// that one late heartbeat drops no peer.
const HeartbeatTTL = 30 * time.Second

// KeyID is the digest of a secret that the admin endpoint and the
// registry show: two instances with the same key id hold the same
// secret. It is an HMAC under the secret of a fixed text, 48 bits of it:
// it names the secret, and tells nothing of it that the store's keys
// (HMACs under it too) do not.
func KeyID(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("helpdesk_gateway readahead_store_key id"))
	return hex.EncodeToString(m.Sum(nil)[:6])
}

// KeyID is the key id of the store's secret.
func (s *Store) KeyID() string { return KeyID(s.cfg.Secret) }

// registry's keys: one hash tag, so that a cluster keeps them in one slot.
const (
	registrySeen = keyPrefix + "{instances}:seen"
	registryInfo = keyPrefix + "{instances}:info"
)

// maxMembers bounds the members a heartbeat reads back.
const maxMembers = 1000

// heartbeatScript drops the registry's expired members, writes ARGV[1]
// (an instance id) with its Member ARGV[2] to expire ARGV[3] ms from the
// store's now, and returns the Members there ("" for none: read only).
var heartbeatScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
local gone = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, 1000)
if #gone > 0 then
  redis.call('ZREM', KEYS[1], unpack(gone))
  redis.call('HDEL', KEYS[2], unpack(gone))
end
if ARGV[1] ~= '' then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
end
local ids = redis.call('ZRANGE', KEYS[1], 0, ` + strconv.Itoa(maxMembers-1) + `)
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(ids))
`)

// Heartbeat writes me into the store's registry for HeartbeatTTL and
// reads back who is there, in one round trip within the store's
// timeout: the Sharing it returns is also what Sharing returns until the
// next. A failed heartbeat is counted as a failed store call (op
// "peers"), but does not put the store in its back-off: pages keep the
// store while their own calls answer (an ACL that predates the registry
// refuses only its commands). A store in its back-off is not asked
// (false).
func (s *Store) Heartbeat(ctx context.Context, me Member) (Sharing, bool) {
	if !s.usable(time.Now()) {
		return s.Sharing(), false
	}
	info, _ := json.Marshal(me)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	res, err := heartbeatScript.Run(ctx, s.client, []string{registrySeen, registryInfo},
		me.Instance, string(info), HeartbeatTTL.Milliseconds()).Slice()
	if err != nil {
		s.errors.Add(1)
		if s.cfg.OnError != nil {
			s.cfg.OnError("peers", err)
		}
		return s.Sharing(), false
	}
	s.answered()
	var members []Member
	for _, v := range res {
		text, ok := v.(string)
		if !ok {
			continue // expired between ZRANGE and HMGET: none in a script, but a nil costs nothing
		}
		var m Member
		if json.Unmarshal([]byte(text), &m) == nil && m.Instance != "" {
			members = append(members, m)
		}
	}
	sh := Share(me, members)
	sh.Checked = time.Now()
	s.sharing.Store(&sh)
	return sh, true
}

// Leave takes instance out of the registry, so that instances still
// there stop counting it at once (a config reloaded gives each instance
// a new id). Best effort, within the store's timeout.
func (s *Store) Leave(ctx context.Context, instance string) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	pipe := s.client.Pipeline() // one slot; no MULTI, which the documented ACL does not allow
	pipe.ZRem(ctx, registrySeen, instance)
	pipe.HDel(ctx, registryInfo, instance)
	_, _ = pipe.Exec(ctx)
}

// Sharing returns what the last heartbeat said; before one, no peer.
func (s *Store) Sharing() Sharing {
	if p := s.sharing.Load(); p != nil {
		sh := *p
		sh.PeerInstances = slices.Clone(sh.PeerInstances)
		sh.NotSharing = slices.Clone(sh.NotSharing)
		return sh
	}
	return Sharing{KeyID: s.KeyID(), PeerInstances: []string{}}
}

// Share sorts the members of the registry into me's peers (the same key
// id and fingerprint: they share entries) and the others, with why.
// me itself is left out.
func Share(me Member, members []Member) Sharing {
	sh := Sharing{Instance: me.Instance, KeyID: me.KeyID, PeerInstances: []string{}}
	for _, m := range members {
		switch {
		case m.Instance == me.Instance:
		case m.KeyID == me.KeyID && m.Fingerprint == me.Fingerprint:
			sh.PeerInstances = append(sh.PeerInstances, m.Instance)
		case m.Deployment != "" && me.Deployment != "" && m.Deployment != me.Deployment:
			sh.NotSharing = append(sh.NotSharing, Apart{m.Instance, ApartDeployment})
		case m.KeyID != me.KeyID:
			sh.NotSharing = append(sh.NotSharing, Apart{m.Instance, ApartKey})
		default:
			sh.NotSharing = append(sh.NotSharing, Apart{m.Instance, ApartFingerprint})
		}
	}
	slices.Sort(sh.PeerInstances)
	slices.SortFunc(sh.NotSharing, func(a, b Apart) int {
		if a.Reason != b.Reason {
			if a.Reason < b.Reason {
				return -1
			}
			return 1
		}
		if a.Instance < b.Instance {
			return -1
		}
		if a.Instance > b.Instance {
			return 1
		}
		return 0
	})
	sh.Peers = len(sh.PeerInstances)
	return sh
}

// Unintended names the instances of sh.NotSharing apart by accident, as
// far as the store can tell: another key, or another fingerprint under
// the same key (not another deployment name, which is on purpose).
func (sh Sharing) Unintended() (key, fingerprint []string) {
	for _, a := range sh.NotSharing {
		switch a.Reason {
		case ApartKey:
			key = append(key, a.Instance)
		case ApartFingerprint:
			fingerprint = append(fingerprint, a.Instance)
		}
	}
	return key, fingerprint
}
