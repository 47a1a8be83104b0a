package main

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const benchOutput = `goos: linux
BenchmarkCostByDepth/perPage=10/mode=page_walk-2   1   7662 ns/op   255.0 stepped/page@500   4755 stepped/page@5000
BenchmarkCostByDepth/perPage=10/mode=readahead-2   1   7662 ns/op   16.5 stepped/page@500   145.5 stepped/page@5000
BenchmarkCostByDepth/perPage=100/mode=readahead-2  1   7662 ns/op   120.4 stepped/page@500   1490 stepped/page@5000
BenchmarkScaleOut/ids=numeric/lb=round_robin/instances=1/perPage=10/walk=first-2  1  5 ns/op  1.000 calls/page  1.686 fetched/served
BenchmarkScaleOut/ids=numeric/lb=round_robin/instances=3/perPage=10/walk=first-2  1  5 ns/op  1.004 calls/page  2.877 fetched/served
BenchmarkScaleOut/ids=numeric/lb=sticky/instances=3/perPage=10/walk=readahead-2   1  5 ns/op  0.013 calls/page  1.023 fetched/served
BenchmarkScaleOut/ids=numeric/lb=round_robin/instances=1/perPage=10/walk=shared-2  1  5 ns/op  0.021 calls/page  1.007 fetched/served
BenchmarkScaleOut/ids=numeric/lb=round_robin/instances=3/perPage=10/walk=shared-2  1  5 ns/op  0.027 calls/page  1.009 fetched/served
BenchmarkScaleOut/ids=numeric/lb=round_robin/instances=3/perPage=100/walk=shared-2  1  5 ns/op  0.190 calls/page  1.020 fetched/served
PASS
`

// TestPlotsFromBenchOutput: each chart is valid SVG with a line per
// series the benchmark output holds, at the values it holds.
func TestPlotsFromBenchOutput(t *testing.T) {
	results, err := parseBench(strings.NewReader(benchOutput))
	require.NoError(t, err)
	require.Len(t, results, 9)
	assert.Equal(t, 4755.0, results[0].metrics["stepped/page@5000"])
	assert.Equal(t, "BenchmarkCostByDepth/perPage=10/mode=page_walk", results[0].name)

	for _, tc := range []struct {
		svg    string
		lines  int
		labels []string
	}{
		{costByDepth(results), 2, []string{"_page walk, no gateway", "gateway, read-ahead (default)", "4755", "146"}},
		{scaleOutCalls(results), 4, []string{"round robin, first walk", "sticky, first walk", "sticky, read-ahead", "0.013",
			"round robin, shared (Redis): 0.027"}}, // sticky at one instance is round robin at one; perPage 100 not drawn
	} {
		require.NotEmpty(t, tc.svg)
		require.NoError(t, xml.Unmarshal([]byte(tc.svg), new(struct{})), "well-formed XML")
		assert.Equal(t, tc.lines, strings.Count(tc.svg, "<polyline"))
		for _, l := range tc.labels {
			assert.Contains(t, tc.svg, l)
		}
	}
	assert.Empty(t, costByDepth(nil), "no lines, no chart")
	_, err = parseBench(strings.NewReader("BenchmarkX-2 1 x ns/op\n"))
	assert.Error(t, err)
}
