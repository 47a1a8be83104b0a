package caddymodule_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// The tests of this file walk through two and three instances behind
// round_robin that share one redis-server through a loopback proxy the
// test holds (stallProxy), at the default readahead_store_timeout (50
// ms), while the backend churns: store calls then stall past their
// deadline, and a call whose connection the client closes meanwhile is
// dropped, never reaching the store (a write lost). Each walk is held to
// the promise of walks_e2e_test.go: every record that lived through the
// walk, with the bytes it had throughout (issue 47, point 1).

// stallProxy forwards connections to a Redis server. Stalled, it holds
// every byte clients send; a connection the client closes while its
// bytes are held loses them (its calls never reach the server), and the
// first bytes that arrive after such a close end the stall (a client
// that tries again once it gave up is let through), as the test's own
// unstall does.
type stallProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	cond    *sync.Cond
	stalled bool
	dropped int // connections closed with bytes held
	closes  int // connections closed in this stall
	// periodic says the stalls are stallEvery's, which end on time only.
	periodic bool
	conns    map[net.Conn]bool
}

func startStallProxy(t *testing.T, target string) *stallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &stallProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.cond = sync.NewCond(&p.mu)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.unstall()
		p.mu.Lock()
		for c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	return p
}

// URL is the proxy's redis:// address.
func (p *stallProxy) URL() string { return "redis://" + p.ln.Addr().String() + "/0" }

func (p *stallProxy) stall() {
	p.mu.Lock()
	p.stalled, p.closes = true, 0
	p.mu.Unlock()
}

func (p *stallProxy) unstall() {
	p.mu.Lock()
	p.stalled = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// stallEvery stalls the proxy for stall every period until stop is
// called, as a store that pauses for its own work does.
func (p *stallProxy) stallEvery(stall, period time.Duration) (stop func()) {
	p.mu.Lock()
	p.periodic = true
	p.mu.Unlock()
	done, over := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(over)
		for {
			p.stall()
			select {
			case <-done:
				p.unstall()
				return
			case <-time.After(stall):
			}
			p.unstall()
			select {
			case <-done:
				return
			case <-time.After(period - stall):
			}
		}
	}()
	return func() {
		close(done)
		<-over
		p.mu.Lock()
		p.periodic = false
		p.mu.Unlock()
	}
}

// drops reports how many connections lost held bytes since the first
// stall.
func (p *stallProxy) drops() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

func (p *stallProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = true, true
		p.mu.Unlock()
		go p.forward(c, s)
		go func() {
			_, _ = io.Copy(c, s)
			_ = c.Close()
		}()
	}
}

// forward copies the client's bytes to the server, holding them while
// the proxy is stalled, and dropping them when the client closed first.
func (p *stallProxy) forward(c, s net.Conn) {
	chunks := make(chan []byte, 1024)
	var closed sync.Once
	gone := make(chan struct{})
	go func() {
		defer close(chunks)
		for {
			b := make([]byte, 64<<10)
			n, err := c.Read(b)
			if n > 0 {
				p.mu.Lock()
				if p.stalled && p.closes > 0 && !p.periodic {
					p.stalled = false // a client trying again after it gave up
					p.cond.Broadcast()
				}
				p.mu.Unlock()
				chunks <- b[:n]
			}
			if err != nil {
				p.mu.Lock()
				if p.stalled {
					p.closes++
				}
				p.mu.Unlock()
				closed.Do(func() { close(gone) })
				return
			}
		}
	}()
	defer func() { _ = s.Close() }()
	for b := range chunks {
		p.mu.Lock()
		held := p.stalled
		for p.stalled {
			p.cond.Wait()
		}
		p.mu.Unlock()
		if held {
			select {
			case <-gone:
				p.mu.Lock()
				p.dropped++
				p.mu.Unlock()
				return // the client gave up on it: the call is lost
			default:
			}
		}
		if _, err := s.Write(b); err != nil {
			return
		}
	}
}

// TestSharedStoreStalls: a walk, then the list changes (records renewed
// under their ids, in place, so that the next walk's pages end where the
// last one's did and meet its chain entries and windows), then a walk
// whose every third page finds the store stalled: the instance serving
// it times out on its calls, which are lost, and sends the page from the
// backend. Its chain entry is not in the store, so the walk's next page,
// on the next instance, must not continue the earlier walk from the
// entry there: its windows hold the records as they were. Then the store
// is flushed, mid-walk, on every fifth page; then it stalls for 70 ms
// every 300 ms, on its own clock, whatever page the walk is at (the
// stalls a walk meets vary from run to run; no run may break it).
// Through two and three instances, at the default deadline; every walk
// exact, and once the faults are over the walk is read from shared
// windows again.
func TestSharedStoreStalls(t *testing.T) {
	const records, perPage = 400, 10
	for _, instances := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d instances", instances), func(t *testing.T) {
			store := redistest.Start(t)
			proxy := startStallProxy(t, store.Addr())
			options := strings.Join([]string{
				"readahead_store " + proxy.URL(),
				"readahead_store_key 0123456789abcdef-e2e-secret",
				"readahead_ttl 30s",
			}, "\n\t\t")
			s, _ := churnedWalksBehind(t, liveAgentBackend, records, scaleOutSites(t, instances, "round_robin", options), true)

			for _, fault := range []struct {
				name  string
				every int
				make  func()
				after func()
			}{
				{"stalled", 3, proxy.stall, proxy.unstall},
				{"flushed", 5, store.Flush, func() {}},
				{"stalling", 0, nil, nil}, // 70 ms every 300 ms, as the store's own pauses come
			} {
				walkThrough(s, "walk before "+fault.name, perPage)
				s.b.Close()
				ids := s.b.IDs(s.list)
				for i := perPage; i < len(ids); i += 3 {
					require.True(t, s.b.Delete(s.list, ids[i]))
					require.NoError(t, s.b.Insert(s.list, ids[i])) // new bytes, same place
				}
				w := s.begin("walk "+fault.name, perPage)
				s.resume()
				faults, drops := 0, proxy.drops()
				if fault.every == 0 {
					stop := proxy.stallEvery(70*time.Millisecond, 300*time.Millisecond)
					for !w.done {
						s.step(w)
					}
					stop()
				}
				for !w.done {
					if w.pages%fault.every == 1 {
						fault.make()
						s.step(w)
						fault.after()
						faults++
						continue
					}
					s.step(w)
				}
				s.finish(w)
				require.Zero(t, w.refused, "no page was refused")
				drops = proxy.drops() - drops
				t.Logf("%s: %d faults made by the page, %d calls dropped", fault.name, faults, drops)
				if fault.name == "stalled" {
					require.Positive(t, drops, "the stalls dropped calls")
				}
				if t.Failed() {
					return
				}
			}
			// Back to no fault: the walk is read from shared windows.
			w := walkThrough(s, "walk after", perPage)
			require.LessOrEqual(t, callsPerPage(w), 0.35, "calls per page once the faults are over")
		})
	}
}
