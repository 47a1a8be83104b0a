package legacy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBody(t *testing.T) {
	for _, tc := range []struct {
		name, body, path, idField string
		ids                       []string
		records                   []string
		err                       string
	}{
		{name: "array of numeric ids", body: `[{"id":1,"a":"x"}, {"id":20}]`, idField: "id",
			ids: []string{"1", "20"}, records: []string{`{"id":1,"a":"x"}`, `{"id":20}`}},
		{name: "string ids with escapes", body: ` [ {"id":"a\"b"} , {"id":"\u00e9"} ] `, idField: "id",
			ids: []string{`a"b`, "é"}, records: []string{`{"id":"a\"b"}`, `{"id":"\u00e9"}`}},
		{name: "records kept byte for byte", body: `[{"id":1,  "n": 1.50e2, "s":"\/"}]`, idField: "id",
			ids: []string{"1"}, records: []string{`{"id":1,  "n": 1.50e2, "s":"\/"}`}},
		{name: "envelope", body: `{"total":2,"data":[{"id":1},{"id":2}],"page":1}`, path: "data", idField: "id",
			ids: []string{"1", "2"}, records: []string{`{"id":1}`, `{"id":2}`}},
		{name: "nested envelope and id", body: `{"result":{"items":[{"meta":{"key":"k1"}}]}}`, path: "result.items", idField: "meta.key",
			ids: []string{"k1"}, records: []string{`{"meta":{"key":"k1"}}`}},
		{name: "empty array", body: `[]`, idField: "id"},
		{name: "not JSON", body: `<html>`, idField: "id", err: "not JSON"},
		{name: "truncated", body: `[{"id":1}`, idField: "id", err: "not JSON"},
		{name: "empty body", body: ``, idField: "id", err: "not JSON"},
		{name: "not an array", body: `{"id":1}`, idField: "id", err: "the body is an object, not an array of records"},
		{name: "envelope missing", body: `{"items":[]}`, path: "data", idField: "id", err: `records_path "data" is not an array`},
		{name: "record without id", body: `[{"id":1},{"name":"x"}]`, idField: "id", err: `record 1 has no id at "id"`},
		{name: "null id", body: `[{"id":null}]`, idField: "id", err: "neither a string nor a number"},
		{name: "object id", body: `[{"id":{}}]`, idField: "id", err: "neither a string nor a number"},
		{name: "object id holding a string", body: `[{"id":{"key":"0000"}}]`, idField: "id", err: "neither a string nor a number"},
		{name: "array id holding an object", body: `[{"id":[{"k":"v"}],"x":1}]`, idField: "id", err: "neither a string nor a number"},
		{name: "record not an object", body: `[1]`, idField: "id", err: "record 0 is not an object"},
		// The setting that would read the body is named, when one would.
		{name: "envelope without records_path", body: `{"total":2,"data":[{"id":1},{"id":2}],"page":1}`, idField: "id", err: "set records_path data to read"},
		{name: "nested envelope without records_path", body: `{"ok":true,"result":{"tags":["a"],"items":[]}}`, idField: "id", err: "set records_path result.items to read"},
		{name: "object holding no records", body: `{"error":"down","codes":[1,2]}`, idField: "id", err: "no member of it holds records"},
		{name: "record without id names id_field", body: `[{"ID":1}]`, idField: "id", err: `record 0 has no id at "id"; set id_field`},
		{name: "null id names id_field", body: `[{"id":null}]`, idField: "id", err: "set id_field if it names the wrong field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBody([]byte(tc.body), tc.path, tc.idField)
			if tc.err != "" {
				var be *BodyError
				require.ErrorAs(t, err, &be)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.ids, b.IDs)
			var recs []string
			for _, r := range b.Records {
				recs = append(recs, string(r))
			}
			assert.Equal(t, tc.records, recs)
		})
	}
}

func TestAppendPage(t *testing.T) {
	for _, tc := range []struct{ body, path, want string }{
		{`[{"id":1},{"id":2},{"id":3}]`, "", `[{"id":2},{"id":3}]`},
		{` [{"id":1},{"id":2},{"id":3}] `, "", ` [{"id":2},{"id":3}] `},
		{`{"total":3,"data":[{"id":1},{"id":2},{"id":3}],"page":1}`, "data", `{"total":3,"data":[{"id":2},{"id":3}],"page":1}`},
	} {
		b, err := ParseBody([]byte(tc.body), tc.path, "id")
		require.NoError(t, err)
		got := b.AppendPage(nil, b.Records[1:])
		assert.Equal(t, tc.want, string(got))
		assert.Len(t, got, b.PageSize(b.Records[1:]))
		assert.True(t, json.Valid(got))
		empty := b.AppendPage(nil, nil)
		assert.True(t, json.Valid(empty), string(empty))
		assert.Len(t, empty, b.PageSize(nil))
	}
}

// TestRepeatedMemberNames: names checked by comparison with the record
// before read exactly as names scanned anew: the same ids and records as
// the three-pass reading, whether names repeat, change, move, carry
// escapes, or an id moves or hides behind a longer name.
func TestRepeatedMemberNames(t *testing.T) {
	for _, body := range []string{
		`[{"id":1,"a":"x"},{"id":2,"a":"y"},{"id":3,"a":"z"}]`,
		`[{"a":"x","id":1},{"id":2,"a":"y"},{"a":"z","id":3}]`,
		`[{"id":1,"ab":1},{"id":2,"a":1,"b":2},{"id":3,"abc":{"id":9}}]`,
		`[{"i\u0064":1},{"id":2},{"i\u0064":3}]`,
		`[{"idx":0,"id":1},{"id":2,"idx":0},{"idx":0,"id":3}]`,
		`[{"id":1,"a":"x"},{"id":2,"a":"x"},{"id":3,"a":"x"}]`,
		`[{"id":1,"name":"a"},{"id":2,"nam":"a","e":1},{"id":3,"name":"a"}]`,
		`[{"id":1},{"id":2,"id":5},{"id":3}]`,
	} {
		want, wantErr := parseBodyGjson([]byte(body), "", "id")
		got, err := ParseBody([]byte(body), "", "id")
		if wantErr != nil {
			assert.EqualError(t, err, wantErr.Error(), body)
			continue
		}
		require.NoError(t, err, body)
		assert.Equal(t, want.IDs, got.IDs, body)
		assert.Equal(t, want.Records, got.Records, body)
	}
	_, err := ParseBody([]byte(`[{"id":1,"a":1},{"id":2,"a":1},{"id":3,"a`), "", "id")
	assert.Error(t, err, "a name cut short after two that matched")
}
