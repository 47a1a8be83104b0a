// Package pbbench measures the gateway in front of a real PocketBase
// (v0.36.8, on SQLite), as issue 40's targets do: a whole cursor walk
// through the gateway, a client following next_page_cursor from the
// first page to the last, against a walk of PocketBase's own keyset API
// (filter=(id>'LAST')&sort=id&perPage=P) at the same page size, one run,
// read-ahead on. It is a module of its own, so that PocketBase never
// enters the plugin's go.mod.
//
// Run from this directory (Linux: it reads /proc/<pid>/stat):
//
//	go test -run '^$' -bench Walk -benchtime 1x -timeout 0
//	PBBENCH_RECORDS=100000,300000 PBBENCH_SIZES=10 go test -run '^$' -bench Walk -benchtime 1x -timeout 0
//
// BenchmarkWalk builds PocketBase with a seed command (./cmd/pb) and the
// gateway (the main module's ./cmd/caddy, as users build it; or
// PBBENCH_GATEWAY, a gateway binary built elsewhere) into $PBBENCH_DIR
// (default $TMPDIR/pbbench), seeds a collection "items" of
// PBBENCH_RECORDS records (default 300,000) there once and keeps it,
// starts PocketBase on a free port of 127.0.0.1, and for each page size
// (PBBENCH_SIZES, default 10,100) walks the list seven ways:
//
//   - with PocketBase's default, a COUNT for totalItems on every list
//     call: PocketBase's own keyset walk; the gateway with
//     backend_keyset "filter=(id>'{id}')"; the gateway in the page
//     dialect (page/perPage); the gateway with backend_keyset
//     "filter=(id>'{id}')&skipTotal=1" (no COUNT on keyset calls);
//   - with skipTotal=1 on every call (in backend_sort): the first three
//     again.
//
// PBBENCH_TOTALS=count or skip runs only the one group or the other.
// Each gateway walk starts a gateway process of its own
// (docs/backends.md's PocketBase row), its calls counted by a reverse
// proxy in this process (PBBENCH_DIRECT=1 sends them straight to
// PocketBase: no counts, and no proxy in the wall time). It logs, for
// each walk, PocketBase's CPU (its process's utime+stime, read before
// the walk and after it and PocketBase's batched request-log write),
// the wall time, both as ratios to the own walk with the same totals
// setting, the gateway's CPU, the calls PocketBase got, the records it
// returned and the rows its offsets stepped over. At 300,000 records the
// whole run takes about 10 minutes, most of it PocketBase's own walk by
// 10 with a COUNT a call; PBBENCH_TOTALS=skip about 3.
//
// BenchmarkCallCost splits PocketBase's CPU into a call's cost, a
// record's, a COUNT row's and an offset row's, to read the walks by.
package pbbench
