package redisstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/redisstore/redistest"
)

// TestStoreMemoryPerWalker holds the figures docs/operating.md gives
// for what one walker costs the store: a chain entry per page served in
// the last readahead_ttl and one per window read ahead of it, at most
// 300 bytes beside its id, and its windows' pages, each its records' ids
// and bytes, the record after it once more, and at most 220 bytes more
// (MEMORY USAGE, which counts Redis's own overhead of each key): a key a
// page, two lengths a record, and a window's meta spread over its pages.
func TestStoreMemoryPerWalker(t *testing.T) {
	srv := redistest.Start(t)
	l := newList(20_000, 3)
	engines := instances(t, srv, 3, time.Minute) // everything the walk made is still there
	ids := walk(t, engines, l, "calls|apikey=k&status=open", 10, nil)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	require.NoError(t, err)
	var chains, chainBytes, chainIDs, windows, windowBytes, payload int64
	for _, k := range keys {
		n, err := c.MemoryUsage(context.Background(), k, 0).Result()
		require.NoError(t, err)
		if _, id, ok := strings.Cut(k, "}:c:"); ok {
			chains++
			chainBytes += n
			chainIDs += int64(len(id))
			continue
		}
		if strings.Contains(k, "}:w:") && !strings.Contains(k, ":p:") {
			windows++
		}
		windowBytes += n
	}
	for _, id := range ids { // what the records hold: their ids and bytes
		payload += int64(len(id) + len(fmt.Sprintf(`{"id":%s,"v":0}`, id)))
	}
	pages := int64(len(ids)+9) / 10
	t.Logf("%d chain entries for %d pages and %d windows: %d B each beside the id; windows %d B for %d B of ids and records",
		chains, pages, windows, (chainBytes-chainIDs)/chains, windowBytes, payload)
	assert.LessOrEqual(t, chains, pages+windows, "one chain entry a page, and one a window read ahead, at most")
	assert.LessOrEqual(t, (chainBytes-chainIDs)/chains, int64(300), "a chain entry beside its id")
	// Each page holds the record after it too: a tenth more, at 10 a page.
	perPage := float64(windowBytes-payload*11/10) / float64(pages)
	t.Logf("a window page: %.0f B beside its records", perPage)
	assert.LessOrEqual(t, perPage, 220.0, "a window's bytes beside its pages' ids and records, per page")
}
