// Package redisstore keeps read-ahead's walks and windows (translate's
// WalkStore) in Redis, so that gateway instances behind a round-robin
// balancer follow each other's walks: a page one instance served is
// continued by another from a window either of them read, under the same
// walk rule and caller boundary as in one instance.
package redisstore

import (
	"context"
	"time"

	"github.com/helpdesk-gateway/gateway/translate"
)

// Config configures a Store.
type Config struct {
	// URL is the store's address: redis://[user:password@]host:port/db or
	// rediss:// for TLS, as go-redis's ParseURL reads it.
	URL string
	// Secret keys the hash that names each list identity's keys: every
	// instance sharing the store needs the same one, and the store never
	// sees it. At least 16 bytes.
	Secret []byte
	// TTL is how long a window or a chain entry serves (readahead_ttl),
	// on the store's clock and on the reading instance's alike.
	TTL time.Duration
	// Timeout is each store call's deadline; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxWindowBytes bounds one window's records and envelope; a larger
	// answer is not kept. 0 means no bound but the TTL's.
	MaxWindowBytes int64
	// Order compares ids, as the engine's.
	Order translate.Order
	// Encode returns what a window's pages are composed from beside its
	// records (the answer's envelope and headers), as bytes, from the
	// window's Source; false keeps no window of that answer.
	Encode func(source any) ([]byte, bool)
	// Decode makes the Source of a window read back, from Encode's bytes.
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

// State is what the admin endpoint shows of a store.
type State struct {
	Addr string `json:"addr"` // host:port, never the credentials
	DB   int    `json:"db"`
	TLS  bool   `json:"tls"`
	Up   bool   `json:"up"`
	// Since is when the store went up or down last.
	Since     time.Time `json:"since"`
	LastError string    `json:"last_error,omitempty"`
	Errors    int64     `json:"errors"`
	// RunID is the server's run_id: a restarted or failed-over store has
	// another, and nothing written under the old one serves.
	RunID string `json:"run_id,omitempty"`
	// Policy is the server's maxmemory-policy, "" when it will not say.
	Policy string `json:"maxmemory_policy,omitempty"`
	// Served counts pages cut from shared windows, Kept windows written.
	Served int64 `json:"served"`
	Kept   int64 `json:"kept"`
}

// Store is a translate.WalkStore in Redis. Its methods are safe for
// concurrent use.
type Store struct {
	cfg Config
}

// Interface guard
var _ translate.WalkStore = (*Store)(nil)

// New returns a store for cfg. It does not wait for the store to answer:
// a store down at start is one down later, costing backend calls.
func New(cfg Config) (*Store, error) { return &Store{cfg: cfg}, nil }

// Cut implements translate.WalkStore.
func (s *Store) Cut(ctx context.Context, list string, q translate.CutQuery) translate.CutResult {
	return translate.CutResult{}
}

// Walked implements translate.WalkStore.
func (s *Store) Walked(ctx context.Context, list string, w translate.Walked) {}

// TTL implements translate.WalkStore.
func (s *Store) TTL() time.Duration { return s.cfg.TTL }

// State returns the store's state and counters.
func (s *Store) State() State { return State{} }

// Close closes the store's connections.
func (s *Store) Close() error { return nil }
