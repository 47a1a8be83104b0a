package adminreport

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/helpdesk-gateway/gateway/translate"
)

// TestCounters: pages, their calls and records, and a read-ahead's calls
// add up; the ratios are absent until their divisor counts.
func TestCounters(t *testing.T) {
	var c Counters
	p := c.Report()
	assert.Nil(t, p.BackendCallsPerPage)
	assert.Nil(t, p.RecordsFetchedPerRecordServed)

	c.Add(&translate.Page{Calls: 2, Fetched: 20, IDs: make([]string, 10)})
	c.AddAhead(1, 10)
	p = c.Report()
	assert.Equal(t, Pages{Served: 1, BackendCalls: 3, RecordsFetched: 30, RecordsServed: 10,
		BackendCallsPerPage: p.BackendCallsPerPage, RecordsFetchedPerRecordServed: p.RecordsFetchedPerRecordServed}, *p)
	require.NotNil(t, p.BackendCallsPerPage)
	assert.Equal(t, 3.0, *p.BackendCallsPerPage)
	assert.Equal(t, 3.0, *p.RecordsFetchedPerRecordServed)
}

// TestNewOffsetCost: no cost without a known extent, nor, read-ahead
// off, before a page is served; the window is the limit with read-ahead
// on, else the mean page served.
func TestNewOffsetCost(t *testing.T) {
	assert.Nil(t, NewOffsetCost(0, 100, true, &Pages{}))
	assert.Nil(t, NewOffsetCost(1000, 100, false, &Pages{}))
	assert.Equal(t, 100, NewOffsetCost(1000, 100, true, &Pages{}).Window)
	oc := NewOffsetCost(1000, 100, false, &Pages{Served: 4, RecordsServed: 40})
	require.NotNil(t, oc)
	assert.Equal(t, 10, oc.Window)
	assert.Equal(t, 1000, oc.ListRecords)
}
