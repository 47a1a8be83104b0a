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
// PBBENCH_GATEWAY, a gateway binary built elsewhere) into
// $PBBENCH_DIR (default $TMPDIR/pbbench), seeds a collection "items" of
// PBBENCH_RECORDS records (default 300,000) there once and keeps it,
// starts PocketBase on a free port of 127.0.0.1, and for each page size
// (PBBENCH_SIZES, default 10,100) walks the list six ways: PocketBase's
// own keyset walk, the gateway with backend_keyset
// "filter=(id>'{id}')" and the gateway in the page dialect
// (page/perPage), then the same three with skipTotal=1, which spares
// PocketBase the COUNT it runs for totalItems on every list call
// (PBBENCH_TOTALS=count or skip runs only the first three or the last
// three). Each
// gateway walk starts a gateway process of its own (docs/backends.md's
// PocketBase row; its calls go through a counting reverse proxy in this
// process). It logs, for each walk, PocketBase's CPU (its process's
// utime+stime, read before the walk and after it and PocketBase's
// batched request-log write), the wall time, both as ratios to the own
// walk with the same totals setting, the calls PocketBase got, the
// records it returned and the rows its offsets stepped over
// (PBBENCH_DIRECT=1 sends the gateway's calls straight to PocketBase:
// no counts, and no proxy in the wall time). A walk of
// 300,000 records at 10 a page takes about a minute.
package pbbench
