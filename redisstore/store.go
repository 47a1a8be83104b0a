// Package redisstore keeps read-ahead's walks and windows (a
// liststore.WalkStore) in Redis, so that gateway instances behind a
// round-robin balancer follow each other's walks: a page one instance
// served is continued by another from a window either of them read, under
// the same walk rule and caller boundary as in one instance.
//
// The rules, as this store keeps them:
//
//   - The walk rule (liststore/walk.go) compares times of answers
//     read by different instances, so they are read off one clock, the
//     store's: Cut returns the store's TIME, taken before the page's
//     calls, and a page's answers carry it. Every entry also carries the
//     store's run_id: a restarted store, or another one after a
//     failover, has another, and nothing written before serves after
//     (a store restored from a snapshot would otherwise hand back chain
//     entries older than ones it lost). On a cluster, both are the
//     list's own server's: its slot's master (nodes.go).
//   - The caller boundary: keys are a keyed hash of the list identity
//     (keys.go), which holds the caller; no query or credential is
//     stored in the clear.
//   - The TTL: every key expires in the store, and a reader refuses an
//     entry older than the TTL on its own clock as well as on the
//     store's, so neither a lagging expiry nor one clock alone serves an
//     older one.
//   - Faults: every call has a deadline; a call that fails turns the
//     store off for a back-off that doubles while it keeps failing, and
//     costs the page a backend call, never an error.
//   - What a fault may lose, a fence voids. A cursor carries only an id,
//     so an entry cannot say which walk it is for; the one under a
//     record is the latest page's that ended there (keep-later), and a
//     page whose write is lost would leave an older walk's entry to
//     decide its next page. So every list has a fence, a time on the
//     store's clock, and no entry or window whose walk rule time is
//     older serves or is written (fence.go): a page whose write failed,
//     timed out or was skipped is not sent until it has moved the fence
//     to the store's now, and a fence that is not there (flushed,
//     evicted, restored without it) or is another run's (a failover, and
//     back) is now. So a page is cut only from an entry written after
//     whatever this walk may have lost; where the store cannot say, the
//     cursor is cold (a backend call), never an older walk's. Where even
//     the fence cannot be moved (the store not answering this instance
//     for resolveTimeout), the page is sent and the fence tried again in
//     the background until it lands: the one gap, stated in SECURITY.md.
//     Why a fence, not entries that name their write or are used once:
//     the cursor, the spec's, has no room for a name, and a walk that
//     stops, or a client that asks a page again, leaves a used-once
//     entry in place or finds it gone; a fence needs neither, costs no
//     round trip (the scripts read it), and voids at once whatever a
//     fault may have let through, whoever wrote it.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
)

// Config configures a Store.
type Config struct {
	// URL is the store's address (ParseAddress): one server,
	// redis://[user:password@]host:port/db as go-redis's ParseURL reads
	// it; a cluster, redis+cluster://[user:password@]host:port[,...]; or
	// a master the sentinels name,
	// redis+sentinel://[user:password@]host:port[,...]/<master name>[/db];
	// rediss for TLS.
	URL string
	// Secret keys the hash that names each list identity's keys: every
	// instance sharing the store needs the same one, and the store never
	// sees it. At least 16 bytes.
	Secret []byte
	// Deployment names what decides the records of the lists this
	// instance keeps (the gateway's fingerprint of its options and
	// backend): it goes into every key's hash beside the list identity,
	// so that instances of one deployment share entries and two
	// deployments never do, whatever Secret they hold. Any bytes; nil is
	// a deployment like any other. See also SetDeployment.
	Deployment []byte
	// TTL is how long a window or a chain entry serves (readahead_ttl),
	// on the store's clock and on the reading instance's alike.
	TTL time.Duration
	// Timeout is each store call's deadline; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxWindowBytes bounds one window's records and envelope; a larger
	// answer is not kept. 0 means no bound but the TTL's.
	MaxWindowBytes int64
	// Order compares ids, as the engine's.
	Order cursor.Order
	// Encode returns what a window's pages are composed from beside its
	// records (the answer's envelope and headers), as bytes, from the
	// window's Source; false keeps no window of that answer.
	Encode func(source any) ([]byte, bool)
	// Decode makes the Source of a window read back, from Encode's bytes;
	// nil (bytes it cannot read) serves no page from that window.
	Decode func([]byte) any
	// OnError, when set, is called for each store call that failed (op is
	// "cut" or "walked"); OnState on each change between up and down, with
	// the error that took it down. Both may be called concurrently.
	OnError func(op string, err error)
	OnState func(up bool, err error)
}

// DefaultTimeout is a store call's deadline when Config.Timeout is 0:
// far above a round trip to a store nearby, far below a backend call.
const DefaultTimeout = 50 * time.Millisecond

// MinSecret is the shortest Config.Secret New takes.
const MinSecret = 16

// State is what the admin endpoint shows of a store.
type State struct {
	Addr string `json:"addr"` // host:port (a list of them for a cluster or sentinels), never the credentials
	// Kind is "cluster" or "sentinel", "" for one server; Master the
	// master's name the sentinels know.
	Kind   string `json:"kind,omitempty"`
	Master string `json:"master_name,omitempty"`
	DB     int    `json:"db"`
	TLS    bool   `json:"tls"`
	Up     bool   `json:"up"`
	// Since is when the store went up or down last.
	Since     time.Time `json:"since"`
	LastError string    `json:"last_error,omitempty"`
	Errors    int64     `json:"errors"`
	// RunID is the server's run_id (on a cluster, the node's connected
	// last): a restarted or failed-over store has another, and nothing
	// written under the old one serves.
	RunID string `json:"run_id,omitempty"`
	// Policy is the server's maxmemory-policy, "" when it will not say.
	Policy string `json:"maxmemory_policy,omitempty"`
	// Served counts pages cut from shared windows, Kept windows written.
	Served int64 `json:"served"`
	Kept   int64 `json:"kept"`
}

// Store is a liststore.WalkStore in Redis. Its methods are safe for
// concurrent use.
type Store struct {
	cfg    Config
	addr   Address
	client redis.UniversalClient // for the calls of no list, and Close
	// one is the server (or the sentinels' master) calls go to; on a
	// cluster, nodes maps the cluster client's node clients to theirs,
	// and a call goes to the node of its list's slot (nodes.go).
	one     *node
	cluster *redis.ClusterClient
	nodes   sync.Map
	epochs  atomic.Uint32 // runs met (nodes.go)

	lastRun atomic.Pointer[string] // the run_id the last connection read
	policy  atomic.Pointer[string]

	errors, served, kept atomic.Int64

	name  string        // random, for the keys of this store's cuts (callName)
	calls atomic.Uint64 // cuts made

	// deployment is Config.Deployment, or SetDeployment's (keys.go).
	deployment atomic.Pointer[[]byte]
	// sharing is what the last Heartbeat read (peers.go).
	sharing atomic.Pointer[Sharing]

	mu        sync.Mutex
	up        bool
	since     time.Time
	lastErr   string
	downUntil time.Time     // no call before it, but one probe after
	backoff   time.Duration // the next down time
	// lost are the lists (their keys' prefix) with a page whose chain
	// entry may not have been written and whose fence did not move
	// either, and when that page began: each is fenced before the
	// instance next reads or writes the store (fence.go).
	lost map[string]time.Time
	// unreachable says a fence timed out since the store last answered:
	// a page then waits for no other (fence.go).
	unreachable bool
	retrying    bool          // retryLost's goroutine runs
	closed      chan struct{} // closed by Close
	closeOnce   sync.Once
}

// Back-off after a failed call: from minBackoff, doubling up to
// maxBackoff while calls keep failing.
const (
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// maxLost bounds the lists kept to fence: an instance that served
	// more lists than this within one TTL of an outage forgets some
	// (see fence.go).
	maxLost = 1 << 14
)

// Interface guard
var _ liststore.WindowCopier = (*Store)(nil)

// CopiesWindows implements liststore.WindowCopier: Walked writes a
// window's records and envelope to the store before it returns, and
// keeps nothing of them.
func (s *Store) CopiesWindows() {}

// New returns a store for cfg. It does not wait for the store to answer:
// a store down at start is one down later, costing backend calls.
func New(cfg Config) (*Store, error) {
	if len(cfg.Secret) < MinSecret {
		return nil, fmt.Errorf("the store's key must be at least %d bytes, the same on every instance", MinSecret)
	}
	if cfg.Encode == nil || cfg.Decode == nil {
		return nil, errors.New("redisstore: Encode and Decode are required")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	a, err := ParseAddress(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("readahead_store: %v", err)
	}
	s := &Store{cfg: cfg, addr: a, up: true, since: time.Now(), name: windowName() + "-", closed: make(chan struct{})}
	empty := ""
	s.lastRun.Store(&empty)
	s.policy.Store(&empty)
	if err := s.open(a); err != nil {
		return nil, fmt.Errorf("readahead_store: %v", redactURLError(err, cfg.URL))
	}
	s.SetDeployment(cfg.Deployment)
	return s, nil
}

// redactURLError keeps the URL's password out of an error that quotes it.
func redactURLError(err error, raw string) error {
	msg := err.Error()
	if i := strings.Index(raw, "://"); i >= 0 {
		if j := strings.LastIndex(raw, "@"); j > i {
			if userinfo := raw[i+3 : j]; userinfo != "" {
				msg = strings.ReplaceAll(msg, userinfo, "xxxxx")
			}
		}
	}
	return errors.New(msg)
}

// TTL implements liststore.WalkStore.
func (s *Store) TTL() time.Duration { return s.cfg.TTL }

// State returns the store's state and counters.
func (s *Store) State() State {
	s.mu.Lock()
	st := State{Up: s.up, Since: s.since, LastError: s.lastErr}
	s.mu.Unlock()
	st.Addr, st.DB, st.TLS = strings.Join(s.addr.Hosts, ","), s.addr.DB, s.addr.TLS
	if s.addr.Kind == Single {
		o := s.one.client.Options()
		st.Addr, st.DB, st.TLS = o.Addr, o.DB, o.TLSConfig != nil
	} else {
		st.Kind, st.Master = s.addr.Kind.String(), s.addr.Master
	}
	st.RunID, st.Policy = *s.lastRun.Load(), *s.policy.Load()
	st.Errors, st.Served, st.Kept = s.errors.Load(), s.served.Load(), s.kept.Load()
	return st
}

// Close closes the store's connections, and stops trying the fences
// pages could not move (fence.go).
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return s.client.Close()
}

// usable reports whether a call may go to the store now: it is up, or
// its back-off has passed (the call is then the probe).
func (s *Store) usable(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up || !now.Before(s.downUntil) {
		return true
	}
	return false
}

// failed counts a failed call and turns the store off for its back-off.
func (s *Store) failed(op string, err error) {
	s.errors.Add(1)
	if s.cluster != nil {
		s.cluster.ReloadState(context.Background()) // a moved slot or a lost master: ask the cluster again, in the background
	}
	if s.cfg.OnError != nil {
		s.cfg.OnError(op, err)
	}
	now := time.Now()
	s.mu.Lock()
	wasUp := s.up
	if wasUp {
		s.up, s.since, s.backoff = false, now, minBackoff
	} else {
		s.backoff = min(2*s.backoff, maxBackoff)
	}
	s.downUntil = now.Add(s.backoff)
	s.lastErr = err.Error()
	s.mu.Unlock()
	if wasUp && s.cfg.OnState != nil {
		s.cfg.OnState(false, err)
	}
}

// answered marks the store up after a call that worked.
func (s *Store) answered() {
	s.mu.Lock()
	wasUp := s.up
	s.up, s.unreachable = true, false
	if !wasUp {
		s.since = time.Now()
	}
	s.mu.Unlock()
	if !wasUp && s.cfg.OnState != nil {
		s.cfg.OnState(true, nil)
	}
}
