package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
)

// The process mode runs the backend, the plain proxy and the gateway each
// as its own Caddy, built once from cmd/caddy, so that each one's CPU and
// allocations can be read apart: in one process the backend's rendering
// and the clients' work blur the difference between the two proxies.

// mainPackage is what the process mode builds.
const mainPackage = "github.com/helpdesk-gateway/gateway/cmd/caddy"

// buildCaddy builds cmd/caddy into dir and returns the binary's path. It
// runs `go build` in the current directory, which must be inside this
// module, as it is under `go run ./bench/loadbench` and `go test`.
func buildCaddy(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "caddy")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, mainPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s: %v\n%s", mainPackage, err, out)
	}
	return bin, nil
}

// caddyProc is one Caddy process: a site on a loopback port and an admin
// endpoint, on another, that serves /debug/vars, /debug/pprof and /metrics.
type caddyProc struct {
	name  string
	url   string // the site, e.g. http://127.0.0.1:40001
	admin string // the admin endpoint's host:port
	cmd   *exec.Cmd
	log   string // the process's stderr, for errors
	done  chan struct{}
}

// processGlobals are the global options of every process: loopback only,
// nothing persisted, no certificates, errors only in the log (nothing on
// the hot path of either proxy logs at a lower level anyway).
const processGlobals = `{
	admin %s
	default_bind 127.0.0.1
	auto_https off
	persist_config off
	grace_period 1s
	log {
		level ERROR
	}
}
`

// backendSite is the reference backend's site: the data set of the bench,
// no churn, so every walk sees the same list.
const backendSite = "http://:0 {\n\thelpdesk_legacy {\n\t\tseed %d\n\t\trecords %d\n\t}\n}\n"

// startCaddy writes a Caddyfile for site (in which {backend} stands for
// backend's host:port and :0 for a free port) into dir, starts bin on it
// and waits until the site answers ready. The process gets SIGKILL if this
// one dies first (Pdeathsig), so no Caddy outlives the bench.
func startCaddy(ctx context.Context, bin, dir, name, site, backend, ready string) (*caddyProc, error) {
	siteAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	adminAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(siteAddr)
	text := fmt.Sprintf(processGlobals, adminAddr) +
		strings.NewReplacer("{backend}", strings.TrimPrefix(backend, "http://"), "http://:0", "http://:"+port).Replace(site)
	file := filepath.Join(dir, name+".Caddyfile")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		return nil, err
	}
	p := &caddyProc{name: name, url: "http://" + siteAddr, admin: adminAddr, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	logFile, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	p.cmd = exec.Command(bin, "run", "--config", file, "--adapter", "caddyfile")
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	// Caddy's data and config directories: the temp dir, not $HOME.
	p.cmd.Env = append(os.Environ(), "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir, "HOME="+dir)
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	if err := p.waitReady(ctx, ready); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// waitReady polls path on the site until it answers 200, for at most a
// minute (the backend makes its data set first).
func (p *caddyProc) waitReady(ctx context.Context, path string) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := client.Get(p.url + path)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready: %s", p.name, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after a minute: %v: %s", p.name, err, p.logTail())
		}
	}
}

// stop asks Caddy to stop (SIGINT), waits up to 5 s, then kills it.
func (p *caddyProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail is the end of the process's log, for an error message.
func (p *caddyProc) logTail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// procSample is what a process has used so far.
type procSample struct {
	cpu         time.Duration // user + system, all threads
	alloc       uint64        // runtime.MemStats.TotalAlloc
	mallocs     uint64        // runtime.MemStats.Mallocs
	reads       uint64        // read syscalls, all threads (/proc/<pid>/io syscr)
	writes      uint64        // write syscalls (syscw)
	calls       float64       // gateway only: backend calls made, from /metrics
	fetched     int64         // gateway only: records the backend sent it
	storeErrors int64         // gateway only: its readahead_store's failed calls
}

// sample reads the process's CPU time from /proc and its allocation
// counters from expvar's memstats at the admin endpoint's /debug/vars.
// The memstats are read first, so the admin handler's own CPU falls before
// the CPU sample that opens a slice and after the one that closes it.
func (p *caddyProc) sample(ctx context.Context, client *http.Client, withCalls bool) (procSample, error) {
	var s procSample
	var vars struct {
		Memstats struct{ TotalAlloc, Mallocs uint64 } `json:"memstats"`
	}
	body, err := p.adminGet(ctx, client, "/debug/vars")
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(body, &vars); err != nil {
		return s, fmt.Errorf("%s /debug/vars: %v", p.name, err)
	}
	s.alloc, s.mallocs = vars.Memstats.TotalAlloc, vars.Memstats.Mallocs
	if withCalls {
		if s.calls, err = p.backendCalls(ctx, client); err != nil {
			return s, err
		}
		if s.fetched, s.storeErrors, err = p.gatewayCounts(ctx, client); err != nil {
			return s, err
		}
	}
	if s.reads, s.writes, err = procSyscalls(p.cmd.Process.Pid); err != nil {
		return s, err
	}
	s.cpu, err = procCPU(p.cmd.Process.Pid)
	return s, err
}

// procSyscalls reads the read and write syscalls that process pid has made
// (syscr and syscw of /proc/<pid>/io, summed over its threads): on
// loopback a syscall costs microseconds, so their count per request is
// often the first thing that tells two proxies apart.
func procSyscalls(pid int) (reads, writes uint64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseIOSyscalls(b)
}

// parseIOSyscalls reads syscr and syscw from the text of /proc/<pid>/io.
func parseIOSyscalls(io []byte) (reads, writes uint64, err error) {
	var seen int
	for line := range strings.Lines(string(io)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ": ")
		var into *uint64
		switch name {
		case "syscr":
			into = &reads
		case "syscw":
			into = &writes
		default:
			continue
		}
		if *into, err = strconv.ParseUint(value, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc io: %q: %v", line, err)
		}
		seen++
	}
	if seen != 2 {
		return 0, 0, fmt.Errorf("/proc io: no syscr and syscw in %.200q", io)
	}
	return reads, writes, nil
}

// backendCalls is the sum of the gateway's backend_subrequests histogram:
// the backend calls it has made, as its own metrics count them.
func (p *caddyProc) backendCalls(ctx context.Context, client *http.Client) (float64, error) {
	body, err := p.adminGet(ctx, client, "/metrics")
	if err != nil {
		return 0, err
	}
	var sum float64
	for line := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(line, "helpdesk_gateway_backend_subrequests_sum{"); ok {
			_, v, _ := strings.Cut(rest, "} ")
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, fmt.Errorf("%s /metrics: %q: %v", p.name, line, err)
			}
			sum += f
		}
	}
	return sum, nil
}

// gatewayCounts reads the gateway's admin endpoint /helpdesk/endpoints:
// the records its backend answers held, over its cursor endpoints (the
// process mode cannot count them at the backend), and its shared store's
// failed calls, each a page read from the backend instead.
func (p *caddyProc) gatewayCounts(ctx context.Context, client *http.Client) (fetched, storeErrors int64, err error) {
	body, err := p.adminGet(ctx, client, "/helpdesk/endpoints")
	if err != nil {
		return 0, 0, err
	}
	var report struct {
		Gateways []struct {
			Readahead struct {
				Store *struct {
					Errors int64 `json:"errors"`
				} `json:"store"`
			} `json:"readahead"`
			Endpoints []struct {
				Pages *struct {
					RecordsFetched int64 `json:"records_fetched"`
				} `json:"pages"`
			} `json:"endpoints"`
		} `json:"gateways"`
	}
	if err := json.Unmarshal(body, &report); err != nil {
		return 0, 0, fmt.Errorf("%s /helpdesk/endpoints: %v", p.name, err)
	}
	for _, g := range report.Gateways {
		if st := g.Readahead.Store; st != nil {
			storeErrors += st.Errors
		}
		for _, ep := range g.Endpoints {
			if ep.Pages != nil {
				fetched += ep.Pages.RecordsFetched
			}
		}
	}
	return fetched, storeErrors, nil
}

func (p *caddyProc) adminGet(ctx context.Context, client *http.Client, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.admin+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s admin %s: %v", p.name, path, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s admin %s: %s: %.200s", p.name, path, resp.Status, b.Bytes())
	}
	return b.Bytes(), nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU reads the user and system time of every thread of process pid
// from /proc/<pid>/stat (fields 14 and 15, in clock ticks).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime+stime from the text of /proc/<pid>/stat. The
// command name, field 2, is in parentheses and may hold spaces, so the
// fields are counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no command name in %.100q", stat)
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc stat: %v", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// profile fetches a CPU profile of seconds from the process's admin
// endpoint into file. It blocks for the profile's length.
func (p *caddyProc) profile(ctx context.Context, seconds int, file string) error {
	client := &http.Client{Timeout: time.Duration(seconds+30) * time.Second, Transport: &http.Transport{Proxy: nil}}
	defer client.CloseIdleConnections()
	b, err := p.adminGet(ctx, client, "/debug/pprof/profile?seconds="+strconv.Itoa(seconds))
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

func freeLoopbackAddr() (string, error) { return gatewaytest.LoopbackAddr() }
