// Command plots draws the performance page's figures as SVG from the
// output of the benchmarks that measure them, read on standard input:
//
//	(go test ./translate -run '^$' -bench 'CostByDepth|ScaleOut' -benchtime 1x &&
//	 go test ./redisstore -run '^$' -bench ScaleOut -benchtime 1x) | go run ./bench/plots -out docs
//
// It writes cost-by-depth.svg (BenchmarkCostByDepth: the records an
// OFFSET/LIMIT backend steps through per page, by depth in the list) and
// scaleout-calls.svg (translate's BenchmarkScaleOut: backend calls per
// page across instances; redisstore's, walk=shared, the instances sharing
// read-ahead through one Redis). It is plain SVG written with the standard library, so the
// plugin's dependency graph holds no plotting library.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	out := flag.String("out", "docs", "directory to write the SVG files into")
	flag.Parse()
	results, err := parseBench(os.Stdin)
	if err != nil {
		log.Fatal(err)
	}
	for name, svg := range map[string]string{
		"cost-by-depth.svg":  costByDepth(results),
		"scaleout-calls.svg": scaleOutCalls(results),
	} {
		if svg == "" {
			log.Fatalf("%s: the input holds none of its benchmark's lines", name)
		}
		if err := os.WriteFile(filepath.Join(*out, name), []byte(svg), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// result is one benchmark line: its name without the -N suffix, and its
// metrics by unit.
type result struct {
	name    string
	metrics map[string]float64
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads go test -bench output; other lines are skipped.
func parseBench(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		res := result{name: procSuffix.ReplaceAllString(f[0], ""), metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: %v", sc.Text(), err)
			}
			res.metrics[f[i+1]] = v
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// param returns the value of key=value in a benchmark name.
func param(name, key string) string {
	for part := range strings.SplitSeq(name, "/") {
		if v, ok := strings.CutPrefix(part, key+"="); ok {
			return v
		}
	}
	return ""
}

// series is one line of a chart.
type series struct {
	label  string
	points [][2]float64
}

// costByDepth is the chart of BenchmarkCostByDepth at 10 records a page.
func costByDepth(results []result) string {
	labels := map[string]string{
		"page_walk": "_page walk, no gateway",
		"gateway":   "gateway, readahead_ttl 0",
		"readahead": "gateway, read-ahead (default)",
		"keyset":    "gateway, backend_keyset",
	}
	var lines []series
	for _, mode := range []string{"page_walk", "gateway", "readahead", "keyset"} {
		for _, r := range results {
			if !strings.HasPrefix(r.name, "BenchmarkCostByDepth/") || param(r.name, "perPage") != "10" || param(r.name, "mode") != mode {
				continue
			}
			s := series{label: labels[mode]}
			for unit, v := range r.metrics {
				if d, ok := strings.CutPrefix(unit, "stepped/page@"); ok {
					depth, _ := strconv.ParseFloat(d, 64)
					s.points = append(s.points, [2]float64{depth, v})
				}
			}
			sort.Slice(s.points, func(i, j int) bool { return s.points[i][0] < s.points[j][0] })
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return chart{
		title:  "Backend records stepped through per page, by depth (5,000 records, 10 a page)",
		xLabel: "depth in the list: records before the page (each point: the pages in the tenth ending there)",
		yLabel: "records stepped through per page (log scale)",
		logY:   true,
	}.svg(lines)
}

// scaleOutCalls is the chart of BenchmarkScaleOut, numeric ids, 10 a page.
func scaleOutCalls(results []result) string {
	var lines []series
	for _, c := range []struct{ lb, walk, label string }{
		{"round_robin", "first", "round robin, first walk"},
		{"round_robin", "second", "round robin, second walk"},
		{"round_robin", "readahead", "round robin, read-ahead"},
		{"round_robin", "shared", "round robin, shared (Redis)"},
		{"sticky", "first", "sticky, first walk"},
		{"sticky", "readahead", "sticky, read-ahead"},
	} {
		s := series{label: c.label}
		for _, r := range results {
			if !strings.HasPrefix(r.name, "BenchmarkScaleOut/") || param(r.name, "ids") != "numeric" ||
				param(r.name, "perPage") != "10" || param(r.name, "lb") != c.lb || param(r.name, "walk") != c.walk {
				continue
			}
			n, _ := strconv.ParseFloat(param(r.name, "instances"), 64)
			s.points = append(s.points, [2]float64{n, r.metrics["calls/page"]})
		}
		if c.lb == "sticky" {
			// One instance is the same with either policy.
			for _, r := range results {
				if param(r.name, "ids") == "numeric" && param(r.name, "perPage") == "10" &&
					param(r.name, "lb") == "round_robin" && param(r.name, "instances") == "1" && param(r.name, "walk") == c.walk {
					s.points = append(s.points, [2]float64{1, r.metrics["calls/page"]})
				}
			}
		}
		sort.Slice(s.points, func(i, j int) bool { return s.points[i][0] < s.points[j][0] })
		if len(s.points) > 0 {
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return chart{
		title:  "Backend calls per page across instances (20,000 records, 10 a page)",
		xLabel: "gateway instances behind the balancer (at 1, both policies are the same)",
		yLabel: "backend calls per page (log scale)",
		logY:   true,
	}.svg(lines)
}
