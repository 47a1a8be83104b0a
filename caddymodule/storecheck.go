package caddymodule

// The shared store as the operator sees it from the first minute: a
// check when the config starts running (caddy run, caddy reload; never
// caddy validate, whose config never runs), whose failure is logged
// with its cause; then a heartbeat through the store (redisstore's
// registry), which shows who shares this instance's entries in the admin
// endpoint and the metrics, and warns when other instances use the store
// but none shares with this one.

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/helpdesk-gateway/gateway/redisstore"
)

// Heartbeats come every firstHeartbeat at first, doubling to
// heartbeatEvery, so that instances started together see each other
// within seconds, and a running one costs the store a call every
// heartbeatEvery (redisstore.HeartbeatTTL is three of them).
const (
	firstHeartbeat = time.Second
	heartbeatEvery = 10 * time.Second
)

// watchStore checks the store once the gateway's config runs and its
// fingerprint is known, then keeps its heartbeat until the config is
// unloaded. Provision never waits for the store.
func (g *Gateway) watchStore(ctx context.Context) {
	if g.store == nil || g.deploy == nil {
		return
	}
	st := g.store
	go func() {
		tick := time.NewTicker(25 * time.Millisecond)
		defer tick.Stop()
		var d *deployment
		for d = g.deploy.known.Load(); d == nil; d = g.deploy.known.Load() {
			select {
			case <-ctx.Done():
				return // caddy validate, or a config replaced before it ran
			case <-tick.C:
			}
		}
		g.checkStore(ctx)
		me := redisstore.Member{Instance: st.instance, KeyID: st.KeyID(), Fingerprint: d.short(), Deployment: g.Deployment}
		alone := false
		for wait := firstHeartbeat; ; wait = min(2*wait, heartbeatEvery) {
			if sh, ok := st.Heartbeat(ctx, me); ok {
				st.joined.Store(true)
				alone = g.logSharing(sh, alone)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
	}()
}

// checkStore asks the store once whether it serves, and logs an error
// naming the cause when it does not: the config serves all the same,
// each page from the backend until the store answers.
func (g *Gateway) checkStore(ctx context.Context) {
	err := g.store.Check(ctx)
	st := g.store.State()
	fields := []zap.Field{zap.String("store", st.Addr)}
	if st.Master != "" {
		fields = append(fields, zap.String("master_name", st.Master))
	}
	var ce *redisstore.CheckError
	switch {
	case err == nil:
		g.logger.Info("readahead_store answers", append(fields, zap.String("run_id", st.RunID), zap.String("maxmemory_policy", st.Policy))...)
		return
	case !errors.As(err, &ce):
		ce = &redisstore.CheckError{Cause: redisstore.CauseOther, Err: err}
	}
	fields = append(fields, zap.String("cause", ce.Cause), zap.Error(ce.Err))
	if ce.Cause == redisstore.CauseEviction {
		g.logger.Error("readahead_store evicts keys: "+ce.Advice(), fields...)
		return
	}
	g.logger.Error("readahead_store failed its check at load ("+ce.Cause+"): "+ce.Advice()+"; the config serves without it, each page from the backend, until it answers", fields...)
}

// logSharing warns when other instances use the store and none shares
// with this one (alone false before), and says when one does again;
// it returns whether this instance is alone now.
func (g *Gateway) logSharing(sh redisstore.Sharing, alone bool) bool {
	key, fingerprint := sh.Unintended()
	now := sh.Peers == 0 && len(key)+len(fingerprint) > 0
	switch {
	case now && !alone:
		var causes []string
		if len(key) > 0 {
			causes = append(causes, "another readahead_store_key (another key_id)")
		}
		if len(fingerprint) > 0 {
			causes = append(causes, "the same key but another deployment fingerprint (their options, or the backend their config reaches, differ)")
		}
		g.logger.Warn("readahead_store: this instance shares its walks with no other instance, though other gateway instances use the store with "+
			strings.Join(causes, ", or ")+"; behind a balancer that spreads walks each page then costs a backend call. "+
			"Give every instance of one deployment the same readahead_store_key and config; if they are separate deployments on purpose, give each its own `deployment` name",
			zap.String("instance", sh.Instance), zap.String("key_id", sh.KeyID),
			zap.Strings("instances_other_key", key), zap.Strings("instances_other_fingerprint", fingerprint))
	case !now && alone:
		g.logger.Info("readahead_store: this instance shares its walks again", zap.String("instance", sh.Instance),
			zap.Int("peers", sh.Peers), zap.Strings("peer_instances", sh.PeerInstances))
	}
	return now
}

// leaveStore takes the instance out of the store's registry as its
// config is unloaded, when a heartbeat wrote it there and the store is
// up: its peers stop counting it at once. A config only validated never
// ran, and asks nothing of the store.
func (g *Gateway) leaveStore() {
	if g.store == nil || !g.store.joined.Load() || !g.store.State().Up {
		return
	}
	g.store.Leave(context.Background(), g.store.instance)
}

// sharingReport is what the admin endpoint shows of who shares g's
// entries; nil without a store.
func (g *Gateway) sharingReport() *redisstore.Sharing {
	if g.store == nil {
		return nil
	}
	sh := g.store.Sharing()
	sh.Instance = g.store.instance
	return &sh
}
