package legacy

import "time"

// Start begins the churn, when configured. It is safe to call more than once.
func (b *Backend) Start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cfg.ChurnPerSecond <= 0 || b.stop != nil {
		return
	}
	b.stop, b.stopped = make(chan struct{}), make(chan struct{})
	go b.churnLoop(b.stop, b.stopped)
}

// Close stops the churn and waits for it. It is safe to call more than once.
func (b *Backend) Close() {
	b.mu.Lock()
	stop, stopped := b.stop, b.stopped
	b.stop = nil
	b.mu.Unlock()
	if stop != nil {
		close(stop)
		<-stopped
	}
}

func (b *Backend) churnLoop(stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	// Tick at most 100 times a second and do the due mutations in a batch.
	interval := max(time.Duration(float64(time.Second)/b.cfg.ChurnPerSecond), 10*time.Millisecond)
	perTick := max(1, int(b.cfg.ChurnPerSecond*interval.Seconds()+0.5))
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			b.Churn(perTick)
		}
	}
}

// Churn makes n random mutations in every list, about half inserts (at a
// free id anywhere in the list's range, or just past its end) and half
// deletes. It is deterministic for a given seed and sequence of calls.
func (b *Backend) Churn(n int) {
	for _, k := range kinds {
		l := b.lists[k.name]
		for range n {
			b.mu.Lock()
			insert := b.rnd.IntN(2) == 0
			pick := b.rnd.Float64()
			var r *record
			l.mu.RLock()
			size := len(l.recs)
			var maxID int64 = 1
			if size > 0 {
				maxID = l.recs[size-1].id
			}
			var victim int64
			if size > 0 {
				victim = l.recs[int(pick*float64(size))].id
			}
			l.mu.RUnlock()
			if insert || size == 0 {
				r = k.make(b.gen, 1+int64(pick*float64(maxID+20)))
			}
			b.mu.Unlock()

			l.mu.Lock()
			if r != nil {
				l.insert(r)
			} else {
				l.remove(victim)
			}
			l.mu.Unlock()
		}
	}
}
