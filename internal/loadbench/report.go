package main

import (
	"fmt"
	"io"
	"time"
)

// Per-request figures of a result.

func (r Result) rate() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

func (r Result) cpuPerRequest() time.Duration {
	return r.CPU / time.Duration(max(r.Requests, 1))
}

func (r Result) perRequest(d time.Duration) time.Duration {
	return d / time.Duration(max(r.Requests, 1))
}

func (r Result) allocPerRequest() float64 { return float64(r.Alloc) / float64(max(r.Requests, 1)) }

func (r Result) mallocsPerRequest() float64 { return float64(r.Mallocs) / float64(max(r.Requests, 1)) }

func (r Result) syscallsPerRequest() (reads, writes float64) {
	n := float64(max(r.Requests, 1))
	return float64(r.Reads) / n, float64(r.Writes) / n
}

func (r Result) bytesPerPage() float64 { return float64(r.Bytes) / float64(max(r.Requests, 1)) }

// CallsPerPage is the backend calls per page served.
func (r Result) CallsPerPage() float64 { return float64(r.Calls) / float64(max(r.Requests, 1)) }

// FetchedPerServed is the records the backend sent per record served.
func (r Result) FetchedPerServed() float64 { return float64(r.Fetched) / float64(max(r.Served, 1)) }

// Write prints the results side by side, then the gateway's figures as
// ratios to, and differences from, the plain proxy's of the same phase set.
func (rep *Report) Write(w io.Writer) {
	c := rep.Config
	fmt.Fprintf(w, "%d records in /%s; each row %v measured, in %d slices taking turns with the other targets, each after %v of warm-up.\n",
		c.Records, c.List, c.Duration, c.Rounds, c.Warmup)
	switch {
	case c.SharedKey && c.Random:
		fmt.Fprintln(w, "The clients are one caller (one API key) asking for pages at random places, the gateway by cursors they build: no page continues a walk.")
	case c.SharedKey:
		fmt.Fprintln(w, "The clients are one caller (one API key), each walking the list in order from its own place in it.")
	case c.Random:
		fmt.Fprintln(w, "Each client is a caller of its own (an API key each), asking for pages at random places, the gateway by cursors it builds: no page continues a walk.")
	}
	if c.ReadBuffer != "" {
		fmt.Fprintf(w, "Both proxies' reverse_proxy transport has read_buffer %s.\n", c.ReadBuffer)
	} else {
		fmt.Fprintln(w, "Both proxies' reverse_proxy transport has Caddy's default read buffer (4 KiB).")
	}
	if c.Processes {
		fmt.Fprint(w, processNote(c))
		fmt.Fprintln(w, "| clients | perPage | target | req/s | p50 | p99 | CPU/req | alloc/req | mallocs/req | reads/req | writes/req | backend CPU/req | client CPU/req | bytes/page | backend calls/page | errors |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range rep.Results {
			calls := "—" // counted by the gateway only
			if r.Target.walksByCursor() {
				calls = fmt.Sprintf("%.3f", r.CallsPerPage())
			}
			reads, writes := r.syscallsPerRequest()
			fmt.Fprintf(w, "| %d | %d | %s | %.0f | %s | %s | %s | %s | %.1f | %.2f | %.2f | %s | %s | %.0f | %s | %d |\n",
				r.Clients, r.PerPage, r.Target, r.rate(), ms(r.P50), ms(r.P99), us(r.cpuPerRequest()),
				kb(r.allocPerRequest()), r.mallocsPerRequest(), reads, writes, us(r.perRequest(r.BackendCPU)), us(r.perRequest(r.ClientCPU)),
				r.bytesPerPage(), calls, r.Errors)
		}
	} else {
		fmt.Fprintf(w, "CPU and allocations are the whole process's (clients, Caddy and backend all run in it) while only that target was driven.\n\n")
		fmt.Fprintln(w, "| clients | perPage | target | req/s | p50 | p99 | CPU/req | alloc/req | bytes/page | backend calls/page | fetched/served | errors |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
		for _, r := range rep.Results {
			fmt.Fprintf(w, "| %d | %d | %s | %.0f | %s | %s | %s | %s | %.0f | %.2f | %.3f | %d |\n",
				r.Clients, r.PerPage, r.Target, r.rate(), ms(r.P50), ms(r.P99), us(r.cpuPerRequest()),
				kb(r.allocPerRequest()), r.bytesPerPage(), r.CallsPerPage(), r.FetchedPerServed(), r.Errors)
		}
	}

	var rows []string
	for _, g := range rep.Results {
		if !g.Target.walksByCursor() && g.Target != Window {
			continue
		}
		for _, against := range []Target{Proxy, Window, NoReadahead} {
			p, ok := rep.find(against, g.Clients, g.PerPage)
			if !ok || g.Target == against || against == Window && !g.Target.walksByCursor() || against == NoReadahead && g.Target != Gateway {
				continue
			}
			row := fmt.Sprintf("| %s | %s | %d | %d | %.3f | %.3f | %s | %s | %s | %s |",
				g.Target, against, g.Clients, g.PerPage, g.rate()/p.rate(), g.CPURatio(p), usDelta(g.cpuPerRequest()-p.cpuPerRequest()),
				msDelta(g.P50-p.P50), msDelta(g.P99-p.P99), kbDelta(g.allocPerRequest()-p.allocPerRequest()))
			if c.Processes {
				row += fmt.Sprintf(" %+.1f |", g.mallocsPerRequest()-p.mallocsPerRequest())
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nEach target against the plain proxy walking the same pages by _page, and the gateway against the window walk (the proxy asked for the backend windows the gateway asks for) and against itself with readahead_ttl 0 (gateway-ttl0), if run:")
	fmt.Fprintln(w)
	if c.Processes {
		fmt.Fprintln(w, "| target | against | clients | perPage | throughput ratio | CPU/req ratio | CPU/req added | p50 added | p99 added | alloc/req added | mallocs/req added |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	} else {
		fmt.Fprintln(w, "| target | against | clients | perPage | throughput ratio | CPU/req ratio | CPU/req added | p50 added | p99 added | alloc/req added |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	}
	for _, row := range rows {
		fmt.Fprintln(w, row)
	}
}

// CPURatio is r's CPU per request over base's.
func (r Result) CPURatio(base Result) float64 {
	return float64(r.cpuPerRequest()) / float64(max(base.cpuPerRequest(), 1))
}

func (rep *Report) find(t Target, clients, perPage int) (Result, bool) {
	for _, r := range rep.Results {
		if r.Target == t && r.Clients == clients && r.PerPage == perPage {
			return r, true
		}
	}
	return Result{}, false
}

func ms(d time.Duration) string      { return fmt.Sprintf("%.3f ms", d.Seconds()*1e3) }
func msDelta(d time.Duration) string { return fmt.Sprintf("%+.3f ms", d.Seconds()*1e3) }
func us(d time.Duration) string      { return fmt.Sprintf("%.0f µs", d.Seconds()*1e6) }
func usDelta(d time.Duration) string { return fmt.Sprintf("%+.0f µs", d.Seconds()*1e6) }
func kb(b float64) string            { return fmt.Sprintf("%.1f KB", b/1e3) }
func kbDelta(b float64) string       { return fmt.Sprintf("%+.1f KB", b/1e3) }
