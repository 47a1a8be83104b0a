//go:build unix

package caddymodule_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/caddymodule/gatewaytest"
	"github.com/helpdesk-gateway/gateway/legacy/reference"
	"github.com/helpdesk-gateway/gateway/testdeps"
)

// findChromium returns a headless-capable Chromium, or skips the test
// (fails it in CI, see testdeps.Missing): HELPDESK_CHROMIUM names one,
// else the usual names on PATH.
func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("HELPDESK_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testdeps.Missing(t, "no Chromium found (chromium, chromium-browser, google-chrome on PATH, or HELPDESK_CHROMIUM): "+
		"install it (`apt-get install chromium`; .ci/run does) to run the browser test")
	return ""
}

// walkPage is a dashboard's page: it walks /calls on the gateway's origin
// by cursor with fetch and posts what it got back to its own origin.
const walkPage = `<!doctype html>
<meta charset="utf-8">
<title>walk</title>
<script type="module">
const base = %q;
const headers = %s;
const report = (result) => fetch("/result", { method: "POST", body: JSON.stringify(result) });
try {
  const ids = [];
  let cursor = null, pages = 0;
  do {
    const query = new URLSearchParams({ _perPage: "100" });
    if (cursor) query.set("_cursor", cursor);
    const resp = await fetch(base + "/calls?" + query, { headers });
    if (!resp.ok) throw new Error(resp.status + " " + await resp.text());
    for (const record of await resp.json()) ids.push(String(record.id));
    cursor = resp.headers.get("next_page_cursor");
    pages++;
  } while (cursor && pages < 1000);
  await report({ ids, pages });
} catch (e) {
  await report({ error: String(e) });
}
</script>
`

// walkResult is what the page posts back.
type walkResult struct {
	IDs   []string `json:"ids"`
	Pages int      `json:"pages"`
	Error string   `json:"error"`
}

// TestBrowserWalksCrossOrigin: in a real headless Chromium, a page on one
// origin walks /calls (2,000 records) on the gateway's origin by cursor with
// fetch and gets every record exactly once. The browser hides every
// header a CORS answer does not expose, so without next_page_cursor in
// Access-Control-Expose-Headers the walk stops after its first page. The
// site's CORS lines are those of docs/clients.md, with an API key header and so a
// preflight; and a deferred `header`, which sets its fields after the
// gateway has composed the page.
func TestBrowserWalksCrossOrigin(t *testing.T) {
	chromium := findChromium(t)
	b := reference.New(reference.Config{Seed: 19, Records: 2000})
	rec := &recorder{next: b}
	backend := httptest.NewServer(rec)
	t.Cleanup(backend.Close)
	all := strIDs(b.IDs("calls"))

	results := make(chan walkResult, 1)
	var page atomic.Value // the page's HTML, set by each subtest
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page.Load().(string)))
	})
	mux.HandleFunc("POST /result", func(w http.ResponseWriter, r *http.Request) {
		var res walkResult
		if err := json.NewDecoder(r.Body).Decode(&res); err != nil {
			res.Error = "the page's report: " + err.Error()
		}
		select {
		case results <- res:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	dashboard := httptest.NewServer(mux) // 127.0.0.1, another port: another origin
	t.Cleanup(dashboard.Close)

	for _, tc := range []struct {
		name, cors, headers string
	}{
		{"the CORS lines of docs/clients.md", strings.ReplaceAll(docExample(t, "cors"), "https://dashboard.example.com", dashboard.URL), `{ apikey: "k-1" }`},
		{"deferred header", "header {\n\t\tdefer\n\t\tAccess-Control-Allow-Origin *\n\t}", `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := gatewaytest.Start(t, "http://:0 {\n"+tc.cors+"\n\thelpdesk_gateway\n\treverse_proxy {backend}\n}\n", backend.URL)
			require.NotEqual(t, dashboard.URL, c.URL)
			page.Store(fmt.Sprintf(walkPage, c.URL, tc.headers))
			rec.reset()

			res := runChromium(t, chromium, dashboard.URL+"/", results)
			require.Empty(t, res.Error)
			assert.Equal(t, 20, res.Pages)
			assert.Len(t, res.IDs, len(all))
			assert.True(t, slices.Equal(all, res.IDs), "every record once, in id order")
			for _, r := range rec.requests() {
				assert.Equal(t, http.MethodGet, r.Method, "the preflight is answered by the site")
				if tc.headers != "{}" {
					assert.Equal(t, "k-1", r.Header.Get("apikey"))
				}
			}
		})
	}
}

// runChromium opens url in a fresh headless Chromium and waits for the
// page's report; the browser and its children are ended when it comes.
func runChromium(t *testing.T, chromium, url string, results <-chan walkResult) walkResult {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--no-proxy-server",
		"--user-data-dir="+t.TempDir(), url)
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	// Its own process group, so that ending it ends its renderers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	select {
	case res := <-results:
		stop()
		return res
	case err := <-exited:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("chromium exited before the page reported (%v):\n%s", err, stderr.String())
	case <-time.After(2 * time.Minute):
		stop()
		t.Fatalf("no report from the page within 2 minutes; chromium said:\n%s", stderr.String())
	}
	return walkResult{}
}
