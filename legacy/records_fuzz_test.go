package legacy

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// FuzzParseBody checks the one-pass scanner against parseBodyGjson, the
// three-pass reading it replaced: the same answers are refused with the
// same message, and the same records and ids come out of the others.
// Only an answer nested deeper than maxDepth is refused by the scanner
// alone, by design.
func FuzzParseBody(f *testing.F) {
	for _, seed := range []struct{ body, path, id string }{
		{`[{"id":1,"a":"x"}, {"id":20}]`, "", "id"},
		{` [ {"id":"a\"b"} , {"id":"\u00e9"} ] `, "", "id"},
		{`{"total":2,"data":[{"id":1},{"id":2}],"page":1}`, "data", "id"},
		{`{"result":{"items":[{"meta":{"key":"k1"}}]}}`, "result.items", "meta.key"},
		{`[{"i\u0064":5,"id":6}]`, "", "id"},
		{`{"d\u0061ta":[{"id":1}],"data":[]}`, "data", "id"},
		{`[{"id":-1.5e3},{"id":true},{"id":null}]`, "", "id"},
		{`[1,{"id":1}]`, "", "id"},
		{`[{"id":1}`, "", "id"},
		{`[[[[[[[[]]]]]]]]`, "", "id"},
		{`{"data":{"id":1}}`, "data", "id"},
		{`[{"x":{"id":1},"id":"02"}] `, "", "id"},
		{`{"page":2,"data":[{"id":1}],"next":"n","total":3}`, "data", "id"},
		{` { "page" : 2 , "per_page":1, "data" : [ {"id":1} ] , "next" : null , "x":[] } `, "data", "id"},
		{`{"p\u0061ge":2,"result":{"page":1,"items":[{"id":1}]},"next":{}}`, "result.items", "id"},
		{`{"next":{"items":[{"id":1}]},"page":[1]}`, "next.items", "id"},
		{`{"data":[{"id":1}],"page":1,"data":[{"id":2}],"":0}`, "data", "id"},
	} {
		f.Add([]byte(seed.body), seed.path, seed.id)
	}
	f.Fuzz(func(t *testing.T, body []byte, path, idField string) {
		if len(path) > 20 || len(idField) > 20 || strings.Contains(path+idField, "@") {
			return // modifiers and long paths test gjson, not us
		}
		want, wantErr := parseBodyGjson(body, path, idField)
		got, err := ParseBody(body, path, idField)
		if err != nil && strings.Contains(err.Error(), "nests deeper") {
			return
		}
		if err != nil && strings.Contains(err.Error(), "does not name an array inside the body") &&
			!gjson.Valid(gjson.GetBytes(body, path).Raw) {
			return // gjson found an "array" inside a string; the scanner refuses it
		}
		if wantErr != nil {
			require.Error(t, err, "the scanner accepted what gjson refused")
			assert.Equal(t, wantErr.Error(), err.Error())
			return
		}
		require.NoError(t, err)
		assert.Equal(t, want.IDs, got.IDs)
		assert.Equal(t, want.Records, got.Records)
		assert.Equal(t, string(want.AppendPage(nil, want.Records)), string(got.AppendPage(nil, got.Records)))
		checkDropped(t, body, path, idField, got)
		// A page cut out of the answer itself is AppendPage's page.
		for _, from := range []int{0, len(want.Records) / 2} {
			mine, err := ParseBody(bytes.Clone(body), path, idField)
			require.NoError(t, err)
			if page, ok := mine.PageInPlace(mine.Records[from:]); ok {
				assert.Equal(t, string(want.AppendPage(nil, want.Records[from:])), string(page))
			}
		}
	})
}

// parseBodyGjson is ParseBody as it was before the scanner: gjson.Valid,
// then ForEach over the array, then Get on each record.
func parseBodyGjson(raw []byte, recordsPath, idField string) (*Body, error) {
	if len(raw) == 0 || !gjson.ValidBytes(raw) {
		return nil, &BodyError{"the body is not JSON"}
	}
	text := unsafe.String(unsafe.SliceData(raw), len(raw))
	var arr gjson.Result
	if recordsPath == "" {
		arr = gjson.Parse(strings.TrimSpace(text))
		arr.Index = strings.IndexByte(text, arr.Raw[0])
	} else {
		arr = gjson.Get(text, recordsPath)
	}
	if !arr.IsArray() {
		return nil, notAnArray(recordsPath)
	}
	if arr.Index <= 0 && recordsPath != "" || arr.Index+len(arr.Raw) > len(raw) || text[arr.Index:arr.Index+len(arr.Raw)] != arr.Raw {
		return nil, &BodyError{fmt.Sprintf("records_path %q does not name an array inside the body", recordsPath)}
	}
	b := &Body{raw: raw, arrayStart: arr.Index, arrayEnd: arr.Index + len(arr.Raw)}
	var err error
	arr.ForEach(func(_, rec gjson.Result) bool {
		n := len(b.IDs)
		if !rec.IsObject() {
			err = &BodyError{fmt.Sprintf("record %d is not an object", n)}
			return false
		}
		var id string
		if id, err = idOf(rec.Get(idField), n, idField); err != nil {
			return false
		}
		b.IDs = append(b.IDs, id)
		b.Records = append(b.Records, raw[rec.Index:rec.Index+len(rec.Raw):rec.Index+len(rec.Raw)])
		return true
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

func TestParseBodyDepth(t *testing.T) {
	deep := `[{"id":1,"x":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}]`
	_, err := ParseBody([]byte(deep), "", "id")
	assert.ErrorContains(t, err, fmt.Sprintf("the body nests deeper than %d levels", maxDepth))
	ok := `[{"id":1,"x":` + strings.Repeat("[", maxDepth-3) + strings.Repeat("]", maxDepth-3) + `}]`
	b, err := ParseBody([]byte(ok), "", "id")
	require.NoError(t, err)
	assert.Equal(t, []string{"1"}, b.IDs)
	_, err = ParseBody([]byte(strings.Repeat("[", 1<<20)), "", "id")
	assert.ErrorContains(t, err, "nests deeper", "a deep body is refused, not recursed into")
}

// TestParseReusesRoom checks that a Body parsed again keeps nothing of
// the answer before.
func TestParseReusesRoom(t *testing.T) {
	var b Body
	require.NoError(t, b.Parse([]byte(`[{"id":1},{"id":2},{"id":3}]`), "", "id"))
	require.NoError(t, b.Parse([]byte(`{"data":[{"id":"x"}]}`), "data", "id"))
	assert.Equal(t, []string{"x"}, b.IDs)
	assert.Equal(t, `{"data":[]}`, string(b.AppendPage(nil, nil)))
	require.Error(t, b.Parse([]byte(`[{"id":1},{"id":{}}]`), "", "id"))
	assert.Empty(t, b.IDs)
	assert.Empty(t, b.Records)
}

// fuzzDrop names the members FuzzParseBody drops: paging names, a name a
// records path often has, and the empty name.
var fuzzDrop = Members{"page": true, "per_page": true, "next": true, "x": true, "data": true, "": true}

// checkDropped parses body again without fuzzDrop's members and checks
// the page against gjson's reading of the envelope: the same records, a
// valid JSON page, and the envelope's top-level members but those
// dropped, in order, each as it came; the member that holds the records
// is never dropped.
func checkDropped(t *testing.T, body []byte, path, idField string, plain *Body) {
	var b Body
	require.NoError(t, b.ParseWithout(bytes.Clone(body), path, idField, fuzzDrop))
	require.Equal(t, plain.IDs, b.IDs)
	require.Equal(t, plain.Records, b.Records)
	page := b.AppendPage(nil, b.Records)
	require.Len(t, page, b.PageSize(b.Records))
	require.True(t, gjson.ValidBytes(page), "%s", page)
	root := gjson.ParseBytes(body)
	if !root.IsObject() {
		require.Equal(t, string(plain.AppendPage(nil, plain.Records)), string(page))
		return
	}
	type member struct{ name, raw string }
	var want, have []member
	holder := -1
	root.ForEach(func(k, v gjson.Result) bool {
		holds := v.Index <= plain.arrayStart && plain.arrayEnd <= v.Index+len(v.Raw)
		if holds && holder < 0 {
			holder = len(want)
		} else if fuzzDrop[k.Str] {
			return true
		}
		want = append(want, member{k.Str, v.Raw})
		return true
	})
	gjson.ParseBytes(page).ForEach(func(k, v gjson.Result) bool {
		have = append(have, member{k.Str, v.Raw})
		return true
	})
	require.Len(t, have, len(want), "%s from %s", page, body)
	for i := range want {
		require.Equal(t, want[i].name, have[i].name, "%s from %s", page, body)
		if i != holder {
			require.Equal(t, want[i].raw, have[i].raw, "%s from %s", page, body)
		}
	}
}
