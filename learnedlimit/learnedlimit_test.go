package learnedlimit

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// list is a list identity as caller.List makes it: path, '?', the
// client's parameters, a NUL, and the caller's hash.
func list(params, who string) string {
	sum := sha256.Sum256([]byte(who))
	return "/calls?" + params + "\x00" + string(sum[:])
}

// TestAgreement: a limit is the endpoint's only when two callers or more
// learned it, no list learned another, and it is not what one set of
// client parameters asks.
func TestAgreement(t *testing.T) {
	type learn struct {
		params, who string
		limit       int
	}
	for _, tc := range []struct {
		name   string
		learns []learn
		agreed int // 0: no agreement
	}{
		{"one caller", []learn{{"", "a", 30}, {"x=1", "a", 30}}, 0},
		{"two callers, one bare list", []learn{{"", "a", 30}, {"", "b", 30}}, 30},
		{"two callers, one parameter set", []learn{{"maxrows=30", "a", 30}, {"maxrows=30", "b", 30}}, 0},
		{"two callers, two parameter sets", []learn{{"x=1", "a", 30}, {"x=2", "b", 30}}, 30},
		{"two limits", []learn{{"", "a", 30}, {"", "b", 30}, {"", "c", 20}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l Limits
			for _, x := range tc.learns {
				l.Add(list(x.params, x.who), x.limit, false)
			}
			counts, agreed, ok := l.Summary()
			assert.Equal(t, tc.agreed != 0, ok)
			assert.Equal(t, tc.agreed, agreed.Limit)
			assert.NotEmpty(t, counts)
			for i := 1; i < len(counts); i++ {
				assert.Less(t, counts[i-1].Limit, counts[i].Limit, "smallest first")
			}
		})
	}
}

// TestOverflow: past MaxLists lists, callers are no longer said to agree.
func TestOverflow(t *testing.T) {
	var l Limits
	for i := range MaxLists {
		l.Add(list(fmt.Sprintf("n=%d", i), fmt.Sprint(i)), 30, false)
	}
	_, _, ok := l.Summary()
	assert.True(t, ok, "MaxLists lists still agree")
	l.Add(list("n=last", "last"), 30, false)
	_, _, ok = l.Summary()
	assert.False(t, ok)
}
