package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What Check finds wrong with a store, the Cause of a CheckError.
const (
	CauseUnreachable = "unreachable" // no connection, or no answer within the timeout
	CauseAuth        = "auth"        // the server refused the credentials
	CauseMasterName  = "master_name" // the sentinels answered, and know no master by that name
	CauseReplica     = "replica"     // the server is a replica, which cannot take the store's writes
	CauseEviction    = "eviction"    // its maxmemory-policy evicts keys before they expire
	CauseOther       = "error"       // anything else the store answered
)

// CheckError is what Check found, with its cause.
type CheckError struct {
	Cause string
	Err   error
}

func (e *CheckError) Error() string { return e.Cause + ": " + e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

// Check asks the store once whether it can serve, within the store's
// timeout: through the sentinels, their master's address (one round trip
// to each sentinel until one names it), then one round trip to the
// server, whose connection reads its role, run_id and eviction policy
// (onConnect). It returns nil, or a *CheckError naming the cause. Its
// failure is a failed store call (op "check"), as any other: the store
// is down for its back-off, and pages go to the backend.
func (s *Store) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	err := s.check(ctx)
	if err == nil {
		s.answered()
		return nil
	}
	var ce *CheckError
	if !errors.As(err, &ce) {
		ce = &CheckError{Cause: classify(err), Err: err}
	}
	ce.Err = redactURLError(ce.Err, s.cfg.URL)
	if ce.Cause != CauseEviction {
		s.failed("check", ce.Err)
	} else {
		s.answered() // it serves; it may drop a newer entry than it keeps
	}
	return ce
}

func (s *Store) check(ctx context.Context) error {
	if s.addr.Kind == Sentinel {
		if err := s.checkSentinels(ctx); err != nil {
			return err
		}
	}
	if err := s.client.Ping(ctx).Err(); err != nil {
		return err
	}
	if p := *s.policy.Load(); p != "" && p != "noeviction" {
		return &CheckError{Cause: CauseEviction, Err: fmt.Errorf("its maxmemory-policy is %s, which can drop a walk's entry before it expires; set maxmemory-policy noeviction", p)}
	}
	return nil
}

// checkSentinels asks each sentinel for the master's address until one
// names it: the sentinels that answered and know no master by that name
// are a wrong master name, not sentinels unreachable.
func (s *Store) checkSentinels(ctx context.Context) error {
	a := s.addr
	var errs []error
	unknown := 0
	for _, host := range a.Hosts {
		o := &redis.Options{Addr: host, DialTimeout: s.cfg.Timeout, ReadTimeout: s.cfg.Timeout, WriteTimeout: s.cfg.Timeout,
			DialerRetries: 1, MaxRetries: -1, Protocol: 2, DisableIdentity: true, ContextTimeoutEnabled: true}
		if a.TLS {
			o.TLSConfig = s.one.client.Options().TLSConfig
		}
		if a.SentinelAuth {
			o.Username, o.Password = a.Username, a.Password
		}
		c := redis.NewSentinelClient(o)
		addr, err := c.GetMasterAddrByName(ctx, a.Master).Result()
		_ = c.Close()
		switch {
		case err == nil && len(addr) == 2:
			return nil
		case errors.Is(err, redis.Nil):
			unknown++
		case err != nil:
			errs = append(errs, fmt.Errorf("sentinel %s: %w", host, err))
		}
	}
	if unknown > 0 {
		return &CheckError{Cause: CauseMasterName, Err: fmt.Errorf("the sentinels at %s answered and know no master named %q (SENTINEL GET-MASTER-ADDR-BY-NAME); check the master name in readahead_store against their `sentinel monitor` lines",
			strings.Join(a.Hosts, ","), a.Master)}
	}
	err := errors.Join(errs...)
	return &CheckError{Cause: classify(err), Err: err}
}

// classify names the cause of a failed call.
func classify(err error) string {
	var ne net.Error
	msg := err.Error()
	switch {
	case strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "WRONGPASS"),
		strings.Contains(msg, "invalid password"), strings.Contains(msg, "invalid username-password"),
		strings.Contains(msg, "AUTH"):
		return CauseAuth
	case strings.Contains(msg, "not a master"):
		return CauseReplica
	case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, context.DeadlineExceeded),
		strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such host"),
		strings.Contains(msg, "i/o timeout"):
		return CauseUnreachable
	}
	return CauseOther
}
