package redisstore

import (
	"context"
	"errors"
	"net"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fences: what an instance does when it cannot learn whether a page's
// chain entry was written.
//
// A cursor carries only an id, so the store cannot tell the walks that
// ended a page at one record apart: the entry there is the latest page's
// (keep-later), and a page whose write is lost leaves an older walk's
// entry deciding for it. So every list has a fence (hdgw:{H}:f, a time
// on the store's clock, see fenceLua), and no entry or window whose walk
// rule time is older than the fence serves, or is written. An instance
// whose write failed, timed out or was skipped (the store off for its
// back-off) moves the fence to the store's now before the page is sent
// (fence): any entry the page's next request finds is then one whose
// answer was read after the page, whichever walk wrote it, and the
// page's own write, should it land later, is refused. Lost another way
// (a flush, a restart, a failover), the fence goes with what was lost and
// is made again at the store's now, of the new run: the same.
//
// The fence is tried, after the write, for resolveTimeout in all: calls
// that time out are tried again (the store is slow or stalled, and the
// write's fate unknown); a call refused is not (a store that is not
// there answers no one, and one that comes back after a restart or a
// failover is another run). A fence that could not be moved is kept
// (lost), tried in the background every retryInterval, and moved before
// the instance's next call reads or writes the store; while it is kept, and the store has not answered since, pages
// wait for no fence, so a store that does not answer costs one page its
// wait per outage.

// resolveTimeout is how long a page waits, in all, for its list's fence
// when its write's fate is unknown: a second, or the store's deadline if
// longer. A stall shorter than this costs the page the wait and its next
// page a backend call, never a record.
func (s *Store) resolveTimeout() time.Duration { return max(s.cfg.Timeout, time.Second) }

// fence moves the fence of the list whose keys start with base, for a
// page that began at made whose chain entry may not be there: see above.
func (s *Store) fence(ctx context.Context, base string, made time.Time) {
	s.mu.Lock()
	wait := !s.unreachable
	s.mu.Unlock()
	if !wait {
		s.remember(base, made)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, s.resolveTimeout())
	defer cancel()
	for {
		err := s.fenceOnce(ctx, base)
		if err == nil {
			s.answered()
			return
		}
		if !timedOut(err) || ctx.Err() != nil {
			s.remember(base, made)
			s.mu.Lock()
			s.unreachable = s.unreachable || timedOut(err)
			s.mu.Unlock()
			s.failed("walked", err)
			s.retryLost()
			return
		}
		s.errors.Add(1)
		select {
		case <-ctx.Done():
		case <-time.After(min(s.cfg.Timeout/5, 10*time.Millisecond)):
		}
	}
}

// fenceOnce moves the fence of one list, in one call to its server.
func (s *Store) fenceOnce(ctx context.Context, base string) error {
	n, r, err := s.nodeFor(ctx, base)
	if err != nil {
		return err
	}
	return fenceScript.Run(ctx, n.client, []string{base + "f"}, r.id, s.cfg.TTL.Milliseconds()).Err()
}

// timedOut reports whether err is a call that ran out of time, or
// waited out the pool for a connection (the others busy with calls that
// stall): the store's answer, or the call's landing, is unknown.
func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.As(err, &ne) && ne.Timeout()
}

// fenceLost moves the fences that pages could not move, those whose
// pages are within the TTL, before any other call reads the store: false
// when that failed (they are kept for the next call, and the store is off
// for its back-off).
func (s *Store) fenceLost(ctx context.Context) bool {
	if err := s.moveLost(ctx); err != nil {
		s.failed("walked", err)
		return false
	}
	return true
}

// retryInterval is how often a store with fences to move is tried in the
// background, whatever its back-off: the fences move within about this
// much of its answering again, not at the instance's next page.
const retryInterval = 20 * time.Millisecond

// retryLost tries the fences pages could not move, in the background,
// until they are moved (or their pages past the TTL) or the store is
// closed: one goroutine a store at most. Its failed calls are counted,
// and do not turn the store off again.
func (s *Store) retryLost() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.retrying {
		return
	}
	s.retrying = true
	go func() {
		for {
			select {
			case <-s.closed:
				s.mu.Lock()
				s.retrying = false
				s.mu.Unlock()
				return
			case <-time.After(retryInterval):
			}
			s.mu.Lock()
			if len(s.lost) == 0 {
				s.retrying = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), s.cfg.Timeout)
			if err := s.moveLost(ctx); err != nil {
				s.errors.Add(1)
			} else {
				s.answered()
			}
			cancel()
		}
	}()
}

// moveLost is fenceLost, its error returned.
func (s *Store) moveLost(ctx context.Context) error {
	s.mu.Lock()
	lost := s.lost
	s.lost = nil
	s.mu.Unlock()
	now := time.Now()
	for base, made := range lost {
		if now.Sub(made) >= s.cfg.TTL {
			continue // every entry it could decide for has expired
		}
		if err := s.fenceOnce(ctx, base); err != nil {
			s.mu.Lock()
			for b, m := range lost {
				s.keep(b, m)
			}
			s.mu.Unlock()
			return err
		}
		delete(lost, base)
	}
	return nil
}

// remember keeps a list to fence once the store answers.
func (s *Store) remember(base string, made time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep(base, made)
}

// keep is remember with s.mu held. Past maxLost lists, one is forgotten.
func (s *Store) keep(base string, made time.Time) {
	if s.lost == nil {
		s.lost = map[string]time.Time{}
	}
	if m, ok := s.lost[base]; ok && !made.After(m) {
		return
	}
	if _, ok := s.lost[base]; !ok && len(s.lost) >= maxLost {
		for b := range s.lost {
			delete(s.lost, b)
			break
		}
	}
	s.lost[base] = made
}
