package caddymodule

// The shared read-ahead store (readahead_store): the gateway's side of
// it. redisstore keeps the walks and windows, and sharedwindow encodes
// a window's answer for it; this file checks the options, opens the
// store, reports its faults, and makes a decoded answer something a page
// is composed from, on whichever instance serves the page.

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/legacy"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/sharedwindow"
)

// composer is what a page is composed from beside its records: the
// backend headers of the answer it starts in, and the envelope its
// records go into. A backend answer this request or this instance read
// (*answerBuf) is one; a window another instance read, as the shared
// store gives it back (*sharedAnswer), is another, and both compose the
// same page from the same records.
type composer interface {
	// backendHeader is the answer's backend headers, for pageHeaders.
	backendHeader() http.Header
	// page returns the page of records; buf, when not nil, is a pooled
	// buffer the caller gives back with putPageBuffer once written.
	page(records [][]byte) (out []byte, buf *[]byte)
}

// Interface guards
var (
	_ composer = (*answerBuf)(nil)
	_ composer = (*sharedAnswer)(nil)
)

func (a *answerBuf) backendHeader() http.Header { return a.answer.header }

// checkStoreURL checks a readahead_store URL (one server, a cluster, or
// a master the sentinels name: redisstore.ParseAddress) and returns it
// read. Its errors never hold the URL's password: they quote the URL
// redacted.
func checkStoreURL(raw string) (redisstore.Address, error) {
	a, err := redisstore.ParseAddress(raw)
	switch {
	case err == nil:
		return a, nil
	case !strings.Contains(raw, "://"):
		return a, fmt.Errorf("readahead_store: not a URL; %s", redisstore.Want)
	}
	return a, fmt.Errorf("readahead_store %q: %v; %s", redisstore.Redact(raw), err, redisstore.Want)
}

// checkStoreOptions makes the checks of the store's options together
// that need no placeholder replaced (Validate, after each option's row:
// the row bounds readahead_store_timeout); the others are
// storeSettings'.
func (g *Gateway) checkStoreOptions() error {
	if timeout := time.Duration(g.ReadaheadStoreTimeout); timeout < 0 {
		return fmt.Errorf("readahead_store_timeout: %v is negative; leave it out for %v", timeout, redisstore.DefaultTimeout)
	}
	if g.ReadaheadStore == "" {
		if g.ReadaheadStoreKey != "" {
			return errKeyWithoutStore
		}
		return nil
	}
	if !strings.Contains(g.ReadaheadStore, "{") {
		if _, err := checkStoreURL(g.ReadaheadStore); err != nil {
			return err
		}
	}
	if g.ReadaheadStoreKey == "" {
		return fmt.Errorf("readahead_store_key: required with readahead_store; write readahead_store_key {env.HELPDESK_STORE_KEY}, a secret of at least %d bytes, the same on every instance", redisstore.MinSecret)
	}
	if !strings.Contains(g.ReadaheadStoreKey, "{") {
		return checkStoreKey(g.ReadaheadStoreKey, "")
	}
	return nil
}

// errKeyWithoutStore refuses readahead_store_key alone: it would be
// ignored, and a store URL lost from the config would go unnoticed.
var errKeyWithoutStore = errors.New("readahead_store_key: set without readahead_store, so nothing would use it; set readahead_store too (each instance then shares its walks), or remove readahead_store_key")

// checkStoreKey refuses a key shorter than the store needs: key is the
// option's value, written holds placeholders, or "" when the key was
// written out; the unset variables of its placeholders are named. The
// key itself is never quoted.
func checkStoreKey(key, written string) error {
	if len(key) >= redisstore.MinSecret {
		return nil
	}
	replaced := ""
	if written != "" {
		replaced = " once placeholders are replaced" + unsetVariables(written)
	}
	return fmt.Errorf("readahead_store_key: %d bytes%s; at least %d are needed, such as the output of `openssl rand -hex 32`, the same on every instance", len(key), replaced, redisstore.MinSecret)
}

// storeSettings are readahead_store and readahead_store_key with their
// placeholders replaced, checked.
type storeSettings struct {
	raw  string             // the URL, as the store reads it; "" when there is no store
	addr redisstore.Address // raw, read
	key  string
}

// storeSettings replaces the placeholders of the store's URL and key and
// checks what they give, before Provision sets anything up: an unset
// variable is a config refused with the option's name, not a store left
// out at run (an instance that keeps its walks to itself, behind a
// balancer that spreads a walk's pages, serves them from windows older
// than the walk) and not a panic.
func (g *Gateway) storeSettings() (storeSettings, error) {
	if g.ReadaheadStore == "" {
		return storeSettings{}, nil
	}
	repl := caddy.NewReplacer()
	raw := repl.ReplaceAll(g.ReadaheadStore, "")
	if raw == "" {
		// Empty, so the option holds placeholders only: no password.
		return storeSettings{}, fmt.Errorf("readahead_store %q: empty once its placeholders are replaced%s; set it, or remove readahead_store and readahead_store_key to keep walks in each instance",
			g.ReadaheadStore, unsetVariables(g.ReadaheadStore))
	}
	a, err := checkStoreURL(raw)
	if err != nil {
		return storeSettings{}, err
	}
	key := repl.ReplaceAll(g.ReadaheadStoreKey, "")
	if err := checkStoreKey(key, g.ReadaheadStoreKey); err != nil {
		return storeSettings{}, err
	}
	return storeSettings{raw: raw, addr: a, key: key}, nil
}

// unsetVariables names the environment variables of s's {env.*}
// placeholders that are unset or empty, as " (HELPDESK_STORE_KEY is not
// set in Caddy's environment)", or "" when there is none.
func unsetVariables(s string) string {
	var unset []string
	for rest := s; ; {
		_, after, ok := strings.Cut(rest, "{env.")
		if !ok {
			break
		}
		name, tail, ok := strings.Cut(after, "}")
		if !ok {
			break
		}
		if os.Getenv(name) == "" && !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
		rest = tail
	}
	switch len(unset) {
	case 0:
		return ""
	case 1:
		return " (" + unset[0] + " is not set in Caddy's environment)"
	}
	return " (" + strings.Join(unset, ", ") + " are not set in Caddy's environment)"
}

// openStore makes the shared store of s when readahead_store is set and
// read-ahead is on. The store is not asked anything yet: one down at
// start is one down later, costing backend calls.
func (g *Gateway) openStore(s storeSettings) error {
	if s.raw == "" {
		return nil
	}
	redisLog.Do(func() { redisstore.LogTo(caddy.Log().Named("readahead_store")) })
	a := s.addr
	host := strings.Join(a.Hosts, ",") // never the credentials
	ttl := time.Duration(*g.ReadaheadTTL)
	if ttl == 0 {
		g.logger.Info("readahead_store is not used: readahead_ttl 0 turns read-ahead off", zap.String("store", host))
		return nil
	}
	timeout := time.Duration(g.ReadaheadStoreTimeout)
	if timeout == 0 {
		timeout = redisstore.DefaultTimeout
	}
	store, err := redisstore.New(redisstore.Config{
		URL:            s.raw,
		Secret:         []byte(s.key),
		TTL:            ttl,
		Timeout:        timeout,
		MaxWindowBytes: g.ReadaheadMemory,
		Order:          g.order,
		Encode:         g.encodeWindow,
		Decode:         decodeWindow,
		OnError: func(op string, err error) {
			metrics.storeErrors.WithLabelValues(op).Inc()
		},
		OnState: g.storeStateLogger(host),
	})
	if err != nil {
		// Its errors name the option already, and never the password.
		return fmt.Errorf("readahead_store %q: %s", a.Redacted(), strings.TrimPrefix(err.Error(), "readahead_store: "))
	}
	g.store = &sharedStore{Store: store, instance: redisstore.NewInstanceID()}
	g.logger.Info("read-ahead walks and windows are kept in readahead_store",
		zap.String("store", host), zap.Stringer("kind", a.Kind), zap.String("master_name", a.Master),
		zap.Bool("tls", a.TLS), zap.Duration("timeout", timeout))
	return nil
}

// redisLog routes go-redis's own notices through Caddy's logger, once
// per process (see redisstore.LogTo).
var redisLog sync.Once

// storeStateLogger returns the store's OnState: a warning when the store
// at host goes down, with the error, and an Info when it is back, each
// once per change however many calls see it. host is the URL's host:port,
// never its credentials.
func (g *Gateway) storeStateLogger(host string) func(up bool, err error) {
	var down atomic.Bool
	return func(up bool, err error) {
		switch {
		case !up && !down.Swap(true):
			g.logger.Warn("readahead_store is down: pages go to the backend until it answers again",
				zap.String("store", host), zap.Error(err))
		case up && down.Swap(false):
			g.logger.Info("readahead_store is back", zap.String("store", host))
		}
	}
}

// sharedStore is the gateway's shared store.
type sharedStore struct {
	*redisstore.Store
	instance string      // this gateway in the store's registry (storecheck.go)
	joined   atomic.Bool // a heartbeat wrote it there: it leaves as it unloads
	closed   atomic.Bool // Cleanup and the context's end both unload the gateway
}

// closeStore closes the shared store, once.
func (g *Gateway) closeStore() {
	if g.store == nil || !g.store.closed.CompareAndSwap(false, true) {
		return
	}
	g.leaveStore()
	if err := g.store.Close(); err != nil {
		g.logger.Debug("closing readahead_store", zap.Error(err))
	}
}

// encodeWindow is the store's Encode (sharedwindow.Encode): what
// composing pages from a window's answer needs beside its records.
func (g *Gateway) encodeWindow(source any) ([]byte, bool) {
	switch a := source.(type) {
	case *answerBuf:
		env, at := a.body.AppendEnvelope(nil)
		return sharedwindow.Encode(a.answer.header, g.dropHeaders, env, at), true
	case *sharedAnswer:
		return sharedwindow.Encode(a.Header, g.dropHeaders, []byte(a.Env), a.At), true
	}
	return nil, false
}

// sharedAnswer is a window's answer as the shared store gave it back
// (sharedwindow.Answer). It is read by every request the window serves,
// so its pages are always composed in a pooled buffer.
type sharedAnswer struct{ sharedwindow.Answer }

func (s *sharedAnswer) backendHeader() http.Header { return s.Header }

func (s *sharedAnswer) page(records [][]byte) (out []byte, buf *[]byte) {
	n := len(s.Env) + 2 + max(len(records)-1, 0)
	for _, r := range records {
		n += len(r)
	}
	buf = pageBuffer(n)
	b := legacy.AppendArray(append(*buf, s.Env[:s.At]...), records)
	*buf = append(b, s.Env[s.At:]...)
	return *buf, buf
}

// decodeWindow is the store's Decode: encodeWindow's bytes made a
// composer again (sharedwindow.Decode). Bytes it cannot read give nil,
// which the store takes as no window: the page is then read from the
// backend.
func decodeWindow(data []byte) any {
	a, ok := sharedwindow.Decode(data)
	if !ok {
		return nil
	}
	return &sharedAnswer{a}
}
