package reference

import "time"

// Start starts the churn when Config.ChurnPerSecond is set. Calling it
// again while the churn runs does nothing; after Close it starts anew.
func (b *Backend) Start() {
	b.run.Lock()
	defer b.run.Unlock()
	if b.cfg.ChurnPerSecond <= 0 || b.stop != nil {
		return
	}
	b.stop, b.done = make(chan struct{}), make(chan struct{})
	go b.churnLoop(b.stop, b.done)
}

// Close stops the churn and waits until it has stopped. It is safe to call
// at any time and more than once.
func (b *Backend) Close() {
	b.run.Lock()
	defer b.run.Unlock()
	if b.stop == nil {
		return
	}
	close(b.stop)
	<-b.done
	b.stop, b.done = nil, nil
}

// churnTick is the churn's shortest interval; mutations due in between are
// made together.
const churnTick = 10 * time.Millisecond

// churnLoop makes the mutations due since it began, at each tick, until
// stop closes.
func (b *Backend) churnLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	rate := b.cfg.ChurnPerSecond
	interval := time.Second
	if rate > 1 {
		interval = max(time.Duration(float64(time.Second)/rate), churnTick)
	}
	// Counting what is due since the start, rather than a fixed number per
	// tick, keeps the rate exact however it divides into ticks. A backlog
	// after a stall is dropped past one second's worth, so that a slow
	// machine gets a lower rate, not ever longer bursts.
	burst := max(1, int(rate))
	start := time.Now()
	made := 0
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			due := int(rate*now.Sub(start).Seconds()) - made
			if due > burst {
				made += due - burst
				due = burst
			}
			if due > 0 {
				b.Churn(due)
				made += due
			}
		}
	}
}

// Churn makes n random mutations in every list: each is an insert or a
// delete with even odds. An insert takes a free id past the last record
// or anywhere below it (see list.freeID); a delete takes a random record.
// Churn draws from the backend's own random source, so for a given seed
// and sequence of calls its effect is always the same.
func (b *Backend) Churn(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range kinds {
		l := b.lists[kinds[i].name]
		if l == nil {
			continue // not made (Config.Only)
		}
		for range n {
			b.mutate(l)
		}
	}
}

// mutate makes one random insert or delete in l. Callers hold b.mu.
func (b *Backend) mutate(l *list) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := b.gen.r
	if len(l.recs) > 0 && r.IntN(2) == 0 {
		l.remove(l.recs[r.IntN(len(l.recs))].id)
		return
	}
	l.insert(l.kind.make(b.gen, l.freeID(r)))
}
