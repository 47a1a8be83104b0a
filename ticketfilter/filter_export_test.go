package ticketfilter

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDescribeFilters: the exported view is the grammar the validator
// checks, compared with the spec's tables copied by hand.
func TestDescribeFilters(t *testing.T) {
	g := DescribeFilters(FilterConfig{})
	got := map[string]string{g.Custom.Name + "color": strings.Join(g.Custom.Operators, " ")}
	for _, p := range g.Params {
		got[p.Name] = strings.Join(p.Operators, " ")
		for _, op := range p.Operators {
			assert.Contains(t, g.Operators, op, p.Name)
		}
	}
	assert.Equal(t, specFilterOps, got)
	assert.Len(t, g.Operators, len(specFilterAllOps))
	assert.Equal(t, 50, g.MaxFilters)
	assert.Equal(t, 8192, g.MaxLength)
	assert.Empty(t, g.StatusCodes)
	assert.Contains(t, g.NotFilterable, "owner_email")

	objectOps := map[string]string{}
	for _, p := range g.Params {
		objectOps[p.Name] = p.ObjectOperator
	}
	assert.Equal(t, "E", objectOps["status"])
	assert.Equal(t, "IN", objectOps["agentid"])
	assert.Equal(t, "L", objectOps["search"])
	assert.Equal(t, "", objectOps["date_created"])
	assert.Equal(t, FilterShapeList, g.Operators["CY"])
	assert.Equal(t, FilterKindDateTime, g.Params[7].Kind)
	class := regexp.MustCompile("^[" + g.PeriodChars + "]$")
	for c := 0; c < 256; c++ {
		assert.Equal(t, filterIsShortCode(string(rune(c))), class.MatchString(string(rune(c))), "character %q", rune(c))
	}

	cfg := FilterConfig{MaxFilters: 3, MaxLength: 99, StatusCodes: []string{"C", "L"}, ChannelTypes: []string{"E"}, PeriodCodes: []string{"T"}}
	g = DescribeFilters(cfg)
	require.Equal(t, []string{"C", "L"}, g.StatusCodes)
	assert.Equal(t, []string{"E"}, g.ChannelTypes)
	assert.Equal(t, []string{"T"}, g.PeriodCodes)
	assert.Equal(t, 3, g.MaxFilters)
	assert.Equal(t, 99, g.MaxLength)
	g.StatusCodes[0] = "X"
	assert.Equal(t, "C", cfg.StatusCodes[0], "the view is a copy")
}
