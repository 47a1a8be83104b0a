package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/helpdesk-gateway/gateway/liststore"
)

// Reads ahead of the walker across instances (liststore.AheadClaimer).
// The instance that serves a window's marker page reads the walk's next
// window in the background; the walker's page at the window's end may go
// to another instance, which would read the same window again if it got
// there before the read was kept. So the cut script claims a read ahead
// for the instance whose cut is the window's marker, when it can read
// ahead (one claim, no round trip more), and an instance that finds the
// window not there yet but the read claimed waits for it, for at most
// most of the store's deadline:
//
//	hdgw:{H}:a:<id>   the claim of the read ahead after record <id>
//	hdgw:{H}:d:<id>   a list that holds an element once that read is over
//
// The wait is a BLMOVE of the list onto itself, which returns as soon as
// the list holds an element and leaves it there, so every waiter wakes;
// a claim whose reader went away expires after readahead_ttl (no read
// ahead takes longer), and its waiters' waits with their own.

// Interface guard
var _ liststore.AheadClaimer = (*Store)(nil)

// DoneAhead implements liststore.AheadClaimer: the claim deleted and the
// done list given its element, in one round trip.
func (s *Store) DoneAhead(ctx context.Context, list, after string) {
	if !s.usable(time.Now()) {
		return // the claim expires; waiters wait no longer than their bound
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	base := s.listKey(list)
	done := base + "d:" + after
	n, _, err := s.nodeFor(ctx, base)
	if err != nil {
		s.failed("ahead", err)
		return
	}
	pipe := n.client.Pipeline()
	pipe.Del(ctx, base+"a:"+after)
	pipe.RPush(ctx, done, "1")
	pipe.PExpire(ctx, done, doneLife)
	if _, err := pipe.Exec(ctx); err != nil {
		s.failed("ahead", err)
		return
	}
	s.answered()
}

// doneLife is how long a read's done list stays for its waiters: longer
// than any wait, short enough that a read after the same record later
// (another walk's) finds none (the claim deletes it too).
const doneLife = 5 * time.Second

// AwaitAhead implements liststore.AheadClaimer. A read after the record
// that ended since the page's Cut (its done list there, its claim
// deleted) is reported at once, so that the page cuts again
// (TestAwaitAheadAfterTheRead). A read claimed is waited for by a BLMOVE
// of its done list, for at most three quarters of what is left of the
// store's deadline once the claim is seen: a wait that lapses (a read
// slower than that, which the page then makes itself) is an answer, and
// the rest of the deadline is the answer's, so that a store slow to show
// the claim is not turned off for it
// (TestAwaitAheadLapsesWithinTheDeadline).
func (s *Store) AwaitAhead(ctx context.Context, list, after string) bool {
	if s.cfg.TTL <= 0 || !s.usable(time.Now()) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	base := s.listKey(list)
	nd, _, err := s.nodeFor(ctx, base)
	if err != nil {
		s.failed("ahead", err)
		return false
	}
	// The claim, and the done list: a read that ended between the page's
	// Cut and this call has deleted its claim, and the page must cut
	// again, not read the window for itself (TestAwaitAheadAfterTheRead).
	done := base + "d:" + after
	pipe := nd.client.Pipeline()
	claimed, ended := pipe.Exists(ctx, base+"a:"+after), pipe.Exists(ctx, done)
	if _, err := pipe.Exec(ctx); err != nil {
		s.failed("ahead", err)
		return false
	}
	if claimed.Val() == 0 {
		s.answered()
		return ended.Val() > 0
	}
	d, _ := ctx.Deadline() // WithTimeout's, or an earlier one of the caller's
	left := time.Until(d)
	if left*3/4 < time.Millisecond {
		s.answered()
		return true // no time left to wait: BLMOVE's 0 would wait for ever
	}
	wait := strconv.FormatFloat((left * 3 / 4).Seconds(), 'f', 3, 64)
	if err := nd.client.Do(ctx, "BLMOVE", done, done, "LEFT", "LEFT", wait).Err(); err != nil && err != redis.Nil {
		s.failed("ahead", err)
		return false
	}
	s.answered()
	return true
}
