package redisstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/internal/redistest"
)

// TestStoreMemoryPerWalker holds the figures docs/operating.md gives
// for what one walker costs the store: a chain entry per page served in
// the last readahead_ttl, at most 300 bytes beside its id, and its
// windows, each record its bytes and its id and at most 8 bytes more
// (MEMORY USAGE, which counts Redis's own overhead of each key).
func TestStoreMemoryPerWalker(t *testing.T) {
	srv := redistest.Start(t)
	l := newList(20_000, 3)
	engines := instances(t, srv, 3, time.Minute) // everything the walk made is still there
	ids := walk(t, engines, l, "calls|apikey=k&status=open", 10, nil)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	var chains, chainBytes, chainIDs, windowBytes, records int64
	for _, k := range keys {
		n, err := c.MemoryUsage(context.Background(), k, 0).Result()
		require.NoError(t, err)
		if _, id, ok := strings.Cut(k, "}:c:"); ok {
			chains++
			chainBytes += n
			chainIDs += int64(len(id))
			continue
		}
		windowBytes += n
		entries, err := c.LRange(ctx, k, 2, -1).Result()
		require.NoError(t, err)
		for _, e := range entries {
			records += int64(len(e)) // id, record and the id's length
		}
	}
	pages := int64(len(ids)+9) / 10
	t.Logf("%d chain entries for %d pages: %d B each beside the id; windows %d B for %d B of ids and records",
		chains, pages, (chainBytes-chainIDs)/chains, windowBytes, records)
	assert.LessOrEqual(t, chains, pages, "one chain entry a page at most")
	assert.LessOrEqual(t, (chainBytes-chainIDs)/chains, int64(300), "a chain entry beside its id")
	perRecord := float64(windowBytes-records) / float64(len(ids))
	assert.LessOrEqual(t, perRecord, 8.0, "a window's bytes beside its ids and records, per record")
}
