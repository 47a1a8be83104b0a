package legacy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

var pagingMembers = Members{"page": true, "per_page": true, "perPage": true, "next": true, "prev": true, "offset": true, "limit": true, "total_pages": true}

// TestDropEnvelopeMembers: a page composed from an envelope leaves out
// the top-level members that describe the backend's window, wherever
// they sit and however many run together, keeps every other member and
// the records' bytes as they came, and stays valid JSON.
func TestDropEnvelopeMembers(t *testing.T) {
	for _, tc := range []struct {
		name, body, path, want string
	}{
		{"after the records", `{"data":[{"id":1},{"id":2}],"total":9,"page":3,"per_page":2}`, "data",
			`{"data":[{"id":2}],"total":9}`},
		{"before the records", `{"page":3,"per_page":2,"data":[{"id":1},{"id":2}],"total":9}`, "data",
			`{"data":[{"id":2}],"total":9}`},
		{"around the records", `{"page":3, "data" : [ {"id":1} , {"id":2} ] , "next":"http://backend.internal/calls?page=4"}`, "data",
			`{"data" : [{"id":2}]}`},
		{"between kept members", `{"total":9,"page":3,"meta":{"page":1},"limit":2,"offset":4,"data":[{"id":1},{"id":2}]}`, "data",
			`{"total":9,"meta":{"page":1},"data":[{"id":2}]}`},
		{"white space and newlines", "{\n  \"page\": 3,\n  \"data\": [{\"id\":1},{\"id\":2}],\n  \"next\": null\n}\n", "data",
			"{\n  \"data\": [{\"id\":2}]\n}\n"},
		{"escaped names", `{"p\u0061ge":3,"data":[{"id":1},{"id":2}],"per\u005fpage":2}`, "data",
			`{"data":[{"id":2}]}`},
		{"names differing in case are kept", `{"Page":3,"data":[{"id":1},{"id":2}],"PER_PAGE":2}`, "data",
			`{"Page":3,"data":[{"id":2}],"PER_PAGE":2}`},
		{"only the records", `{"data":[{"id":1},{"id":2}]}`, "data", `{"data":[{"id":2}]}`},
		{"nested path: top-level siblings go, siblings along the path stay",
			`{"page":3,"result":{"page":3,"items":[{"id":1},{"id":2}],"next":"x"},"total":9,"next":"y"}`, "result.items",
			`{"result":{"page":3,"items":[{"id":2}],"next":"x"},"total":9}`},
		{"nested path, member named like a dropped one holds the records",
			`{"page":{"items":[{"id":1},{"id":2}]},"limit":2}`, "page.items",
			`{"page":{"items":[{"id":2}]}}`},
		{"records member named like a dropped one", `{"next":[{"id":1},{"id":2}],"page":1}`, "next",
			`{"next":[{"id":2}]}`},
		{"bare array", `[{"id":1},{"id":2}]`, "", `[{"id":2}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Body
			require.NoError(t, b.ParseWithout([]byte(tc.body), tc.path, "id", pagingMembers))
			require.Len(t, b.Records, 2)
			got := b.AppendPage(nil, b.Records[1:])
			assert.Equal(t, tc.want, string(got))
			assert.Len(t, got, b.PageSize(b.Records[1:]))
			assert.True(t, gjson.ValidBytes(got))

			var plain Body
			require.NoError(t, plain.Parse([]byte(tc.body), tc.path, "id"))
			assert.Equal(t, plain.IDs, b.IDs)
			assert.Equal(t, plain.Records, b.Records, "the records' bytes as they came")
		})
	}
}

// TestParseWithoutReusesRoom: a Body parsed again keeps no cut of the
// answer before.
func TestParseWithoutReusesRoom(t *testing.T) {
	var b Body
	require.NoError(t, b.ParseWithout([]byte(`{"page":1,"data":[{"id":1}],"next":2}`), "data", "id", pagingMembers))
	require.NoError(t, b.ParseWithout([]byte(`{"data":[{"id":1}],"total":5}`), "data", "id", pagingMembers))
	assert.Equal(t, `{"data":[{"id":1}],"total":5}`, string(b.AppendPage(nil, b.Records)))
	require.Error(t, b.ParseWithout([]byte(`{"page":1,"data":[{"id":{}}]}`), "data", "id", pagingMembers))
	require.NoError(t, b.Parse([]byte(`{"page":1,"data":[{"id":1}]}`), "data", "id"))
	assert.Equal(t, `{"page":1,"data":[{"id":1}]}`, string(b.AppendPage(nil, b.Records)), "Parse drops nothing")
}

// TestPageInPlaceUntouchedByDrop: a bare array is still cut in place.
func TestPageInPlaceUntouchedByDrop(t *testing.T) {
	var b Body
	require.NoError(t, b.ParseWithout([]byte(`[{"id":1},{"id":2},{"id":3}]`), "", "id", pagingMembers))
	page, ok := b.PageInPlace(b.Records[1:])
	require.True(t, ok)
	assert.Equal(t, `[{"id":2},{"id":3}]`, string(page))
}

// TestAppendEnvelopeComposesAppendPage: a page composed from the envelope
// alone and records kept apart is AppendPage's, byte for byte, for every
// page of the answer, with the dropped members left out.
func TestAppendEnvelopeComposesAppendPage(t *testing.T) {
	for _, tc := range []struct{ name, body, path string }{
		{"bare array", `[{"id":1},{"id":2},{"id":3}]`, ""},
		{"bare array with space", " [ {\"id\":1} ,\n{\"id\":2},{\"id\":3} ]\n", ""},
		{"envelope", `{"page":3,"data":[{"id":1},{"id":2},{"id":3}],"total":9,"next":"http://b/?page=4"}`, "data"},
		{"nested path", `{"page":3,"result":{"page":3,"items":[{"id":1},{"id":2},{"id":3}]},"total":9}`, "result.items"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Body
			require.NoError(t, b.ParseWithout([]byte(tc.body), tc.path, "id", pagingMembers))
			env, at := b.AppendEnvelope([]byte("prefix"))
			env, at = env[len("prefix"):], at-len("prefix")
			assert.False(t, strings.HasPrefix(string(env), `{"page"`), "dropped members are left out")
			for i := range len(b.Records) + 1 {
				records := b.Records[i:]
				composed := append([]byte{}, env[:at]...)
				composed = append(composed, '[')
				for j, r := range records {
					if j > 0 {
						composed = append(composed, ',')
					}
					composed = append(composed, r...)
				}
				composed = append(append(composed, ']'), env[at:]...)
				assert.Equal(t, string(b.AppendPage(nil, records)), string(composed))
			}
		})
	}
}
