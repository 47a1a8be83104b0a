package pbbench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dir is where the binaries, the seeded lists and the logs are kept
// between runs: seeding 300,000 records takes a while.
func dir() string {
	if d := os.Getenv("PBBENCH_DIR"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "pbbench")
}

// build builds PocketBase (./cmd/pb) and the gateway (the main module's
// ./cmd/caddy, as users build it, unless PBBENCH_GATEWAY names a
// gateway binary) into dir(). Go's build cache makes a second run cheap.
func build(b *testing.B) (pb, gw string) {
	if _, err := exec.LookPath("go"); err != nil {
		b.Skip("pbbench builds PocketBase and the gateway with the go command, which is not on PATH")
	}
	d := dir()
	if err := os.MkdirAll(d, 0o755); err != nil {
		b.Fatal(err)
	}
	pb, gw = filepath.Join(d, "pb"), filepath.Join(d, "gw")
	builds := []struct{ dir, out, pkg string }{{".", pb, "./cmd/pb"}, {"../..", gw, "./cmd/caddy"}}
	if bin := os.Getenv("PBBENCH_GATEWAY"); bin != "" {
		// A gateway built elsewhere (another commit, a proposal), walked
		// as this one would be.
		gw, builds = bin, builds[:1]
	}
	for _, s := range builds {
		cmd := exec.Command("go", "build", "-o", s.out, s.pkg)
		cmd.Dir = s.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go build %s: %v\n%s", s.pkg, err, out)
		}
	}
	return pb, gw
}

// seeded returns PocketBase's data directory holding n records, seeding
// it the first time.
func seeded(b *testing.B, pb string, n int) string {
	data := filepath.Join(dir(), fmt.Sprintf("pb_data-%d", n))
	marker := filepath.Join(data, "seeded")
	if _, err := os.Stat(marker); err == nil {
		return data
	}
	if err := os.RemoveAll(data); err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	if out, err := exec.Command(pb, "--dir", data, "seed", strconv.Itoa(n)).CombinedOutput(); err != nil {
		b.Fatalf("seeding %d records: %v\n%s", n, err, out)
	}
	b.Logf("seeded %d records in %v (%s)", n, time.Since(t0).Round(time.Millisecond), data)
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	return data
}

// freePort is a free port on 127.0.0.1.
func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a process this benchmark started.
type proc struct {
	cmd *exec.Cmd
	log *bytes.Buffer
}

// start starts name with args, logging to a buffer shown on failure,
// and waits until ready answers 200.
func start(b *testing.B, ready string, env []string, name string, args ...string) *proc {
	p := &proc{cmd: exec.Command(name, args...), log: new(bytes.Buffer)}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.Env = append(os.Environ(), env...)
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(p.stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s did not answer %s in 30s: %v\n%s", name, ready, err, p.log)
		}
	}
}

func (p *proc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// cpu is the process's user and system CPU so far, from /proc/<pid>/stat
// (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func (p *proc) cpu(b *testing.B) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		b.Fatalf("reading a process's CPU (Linux only): %v", err)
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		b.Fatal(err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// tally is what PocketBase was asked and answered, as the counter saw it.
type tally struct {
	calls, keysetCalls int
	returned           int // records in the answers
	stepped            int // rows skipped by the page calls' offsets: (page-1)·perPage
	pageCalls          []string
	windows            map[int]int // keyset calls by perPage
}

// counter is a reverse proxy in front of PocketBase that counts the
// gateway's calls and the records PocketBase returns. It runs in this
// process, so its CPU is never PocketBase's.
type counter struct {
	mu      sync.Mutex
	t       tally
	backend string
	client  *http.Client
}

// newCounter starts a counter in front of backend on 127.0.0.1 and
// returns it with its address (host:port).
func newCounter(b *testing.B, backend string) (*counter, string) {
	c := &counter{backend: backend, client: &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 16, DisableCompression: true}}}
	c.reset()
	srv := httptest.NewServer(c)
	b.Cleanup(srv.Close)
	return c, srv.Listener.Addr().String()
}

func (c *counter) reset() tally {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.t
	c.t = tally{windows: map[int]int{}}
	return t
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, c.backend+r.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := c.client.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	// Every record of a collection carries its collectionId: counting
	// them costs this process far less than decoding the answer, and
	// adds less to the gateway walk's wall time.
	records := bytes.Count(body, []byte(`"collectionId":`))
	q := r.URL.Query()
	per, _ := strconv.Atoi(q.Get("perPage"))
	c.mu.Lock()
	c.t.calls++
	c.t.returned += records
	if q.Has("filter") {
		c.t.keysetCalls++
		c.t.windows[per]++
	} else {
		page, _ := strconv.Atoi(q.Get("page"))
		c.t.stepped += max(page-1, 0) * per
		c.t.pageCalls = append(c.t.pageCalls, fmt.Sprintf("page=%d&perPage=%d", max(page, 1), per))
	}
	c.mu.Unlock()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

// summary says what the calls were: the keyset windows by size, and the
// page calls (few with read-ahead; else their count).
func (t tally) summary() string {
	var parts []string
	if t.keysetCalls > 0 {
		sizes := make([]int, 0, len(t.windows))
		for s := range t.windows {
			sizes = append(sizes, s)
		}
		slices.Sort(sizes)
		var w []string
		for _, s := range sizes {
			w = append(w, fmt.Sprintf("%d×perPage %d", t.windows[s], s))
		}
		parts = append(parts, "keyset: "+strings.Join(w, ", "))
	}
	if n := len(t.pageCalls); n > 0 && n <= 8 {
		parts = append(parts, "page: "+strings.Join(t.pageCalls, " "))
	} else if n > 0 {
		parts = append(parts, fmt.Sprintf("page: %d calls, first %s, last %s", n, t.pageCalls[0], t.pageCalls[n-1]))
	}
	return strings.Join(parts, "; ")
}

// pocketBaseURL is the list's records endpoint under base.
func pocketBaseURL(base string, q url.Values) string {
	return base + "/api/collections/items/records?" + q.Encode()
}
