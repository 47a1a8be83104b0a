package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/cursor"
	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/redisstore"
	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
	"github.com/helpdesk-gateway/gateway/translate"
)

// TestDeploymentsApart: one caller's walk, kept by an instance of
// deployment "staging", continues for another instance of staging and
// for no instance of "production", which holds the same secret: the
// deployment is in every key's hash. SetDeployment moves a store to
// another deployment's keys.
func TestDeploymentsApart(t *testing.T) {
	srv := redistest.Start(t)
	l := newList(2000, 1)
	const list = "calls|apikey=alice"
	with := func(name string) func(*redisstore.Config) {
		return func(c *redisstore.Config) { c.Deployment = []byte(name) }
	}
	engine := &translate.Engine{Order: cursor.Numeric, MaxPageSize: 1000, Offsets: true,
		Lists: translate.NewMemoryStore(cursor.Numeric, 30*time.Second, 64<<20),
		Walks: newStore(t, srv, 30*time.Second, with("staging"))}
	t.Cleanup(engine.WaitAhead)
	walk(t, []*translate.Engine{engine}, l, list, 10, nil)

	cut := func(s *redisstore.Store) liststore.CutResult {
		return s.Cut(context.Background(), list, liststore.CutQuery{After: "500", Size: 10, Now: time.Now()})
	}
	require.True(t, cut(newStore(t, srv, 30*time.Second, with("staging"))).Continues, "another instance of staging continues the walk")
	for _, other := range []*redisstore.Store{
		newStore(t, srv, 30*time.Second, with("production")),
		newStore(t, srv, 30*time.Second, with("")),
		newStore(t, srv, 30*time.Second, with("stagin")),
	} {
		c := cut(other)
		assert.False(t, c.Continues, "another deployment continues no walk of staging's")
		assert.Nil(t, c.Window)
	}
	moved := newStore(t, srv, 30*time.Second, with("production"))
	moved.SetDeployment([]byte("staging"))
	assert.True(t, cut(moved).Continues, "SetDeployment: staging's keys")
}
