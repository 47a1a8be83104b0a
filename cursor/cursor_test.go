package cursor

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeCursor(t *testing.T) {
	std := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, value, id, err string
	}{
		{name: "standard padded", value: std(`{"id":"42"}`), id: "42"},
		{name: "standard unpadded", value: strings.TrimRight(std(`{"id":"4"}`), "="), id: "4"},
		{name: "url-safe", value: base64.URLEncoding.EncodeToString([]byte(`{"id":"~~~>>>"}`)), id: "~~~>>>"},
		{name: "url-safe unpadded", value: base64.RawURLEncoding.EncodeToString([]byte(`{"id":"??>"}`)), id: "??>"},
		{name: "plus turned into a space", value: strings.ReplaceAll(std(`{"id":"~~~>>>"}`), "+", " "), id: "~~~>>>"},
		{name: "number id", value: std(`{"id":12345678901234567890123}`), id: "12345678901234567890123"},
		{name: "extra members", value: std(`{"a":[1,{}],"id":"x","b":null}`), id: "x"},
		{name: "whitespace in JSON", value: std(" {\n\"id\" : \"7\" } "), id: "7"},
		{name: "escaped id", value: std(`{"id":"a\"b\u00e9"}`), id: `a"bé`},
		{name: "empty", value: "", err: "empty"},
		{name: "not base64", value: "!!!!", err: "not base64"},
		{name: "mixed alphabets", value: "ab+-", err: "not base64"},
		{name: "too long", value: strings.Repeat("A", MaxLength+1), err: "longer"},
		{name: "not JSON", value: std(`id=5`), err: "JSON"},
		{name: "trailing garbage", value: std(`{"id":"5"}x`), err: "JSON"},
		{name: "invalid UTF-8", value: std("{\"id\":\"\xff\"}"), err: "JSON"},
		{name: "array", value: std(`["5"]`), err: "object"},
		{name: "no id", value: std(`{"ID":"5"}`), err: `no "id"`},
		{name: "empty id", value: std(`{"id":""}`), err: "empty"},
		{name: "null id", value: std(`{"id":null}`), err: "not a string"},
		{name: "fraction", value: std(`{"id":1.5}`), err: "whole number"},
		{name: "exponent", value: std(`{"id":1e3}`), err: "whole number"},
		{name: "object id", value: std(`{"id":{"a":1}}`), err: "not a string"},
		{name: "longest id", value: std(`{"id":"` + strings.Repeat("x", MaxIDLength) + `"}`), id: strings.Repeat("x", MaxIDLength)},
		{name: "longest number id", value: std(`{"id":` + strings.Repeat("9", MaxIDLength) + `}`), id: strings.Repeat("9", MaxIDLength)},
		{name: "id too long", value: std(`{"id":"` + strings.Repeat("x", MaxIDLength+1) + `"}`), err: "longer than 512 bytes"},
		{name: "number id too long", value: std(`{"id":` + strings.Repeat("9", MaxIDLength+1) + `}`), err: "longer than 512 bytes"},
		{name: "short escapes that re-encode long", value: std(`{"id":"` + strings.Repeat(`\t`, MaxIDLength+1) + `"}`), err: "longer than 512 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, err := Decode(tc.value)
			if tc.err != "" {
				var ce *Error
				require.ErrorAs(t, err, &ce)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.id, id)
		})
	}
}

// TestExactCursorID: the fast path takes what Encode makes, whatever
// the padding its length needs, and leaves everything else to the full
// path, which must then give the same answer it gives alone.
func TestExactCursorID(t *testing.T) {
	std := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"numeric id, no padding", Encode("123456"), true},
		{"one padding byte", Encode("12345"), true},
		{"two padding bytes", Encode("1234"), true},
		{"lexical id", Encode("TK-000123"), true},
		{"uuid", Encode("0b9c6a4e-1f0e-4c6b-9a7e-2f3d4c5b6a79"), true},
		{"non-ASCII", Encode("é✓"), true},
		{"unpadded", strings.TrimRight(Encode("1234"), "="), false},
		{"url-safe", base64.URLEncoding.EncodeToString([]byte(`{"id":"~~~>>>"}`)), false},
		{"plus as a space", strings.ReplaceAll(Encode("~~~>>>"), "+", " "), false},
		{"escaped id", Encode(`quo"te`), false},
		{"control character", Encode("tab	here"), false},
		{"number id", std(`{"id":42}`), false},
		{"extra member", std(`{"id":"4","a":1}`), false},
		{"whitespace", std(`{ "id":"4"}`), false},
		{"empty id", std(`{"id":""}`), false},
		{"invalid UTF-8", std("{\"id\":\"\xff\"}"), false},
		{"padding inside", "eyJp=CI6IjEyMzQifQ==", false},
		{"longer than the fast path", Encode(strings.Repeat("9", 200)), false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, ok := exactCursorID(tc.value)
			assert.Equal(t, tc.ok, ok)
			full, err := decode(tc.value)
			if ok {
				require.NoError(t, err)
				assert.Equal(t, full, fast)
			}
			got, gotErr := Decode(tc.value)
			assert.Equal(t, full, got)
			assert.Equal(t, err, gotErr)
		})
	}
}

func TestEncodeCursor(t *testing.T) {
	assert.Equal(t, base64.StdEncoding.EncodeToString([]byte(`{"id":"123"}`)), Encode("123"))
	for _, id := range []string{"123", `quo"te`, `back\slash`, "tab\tnew\nline\x00nul", "é✓", "bad\xffutf8", "</script>"} {
		raw, err := base64.StdEncoding.DecodeString(Encode(id))
		require.NoError(t, err)
		require.True(t, json.Valid(raw), "%q", raw)
		var v map[string]string
		require.NoError(t, json.Unmarshal(raw, &v))
		assert.Len(t, v, 1)
		if utf8.ValidString(id) {
			assert.Equal(t, id, v["id"])
			back, err := Decode(Encode(id))
			require.NoError(t, err)
			assert.Equal(t, id, back)
		}
	}
}

// TestLongestCursorIsAccepted checks that every cursor the gateway can send
// is accepted back: the longest id, all of it needing a six-byte escape.
func TestLongestCursorIsAccepted(t *testing.T) {
	id := strings.Repeat("\x01", MaxIDLength)
	require.NoError(t, Lexical.Check(id))
	enc := Encode(id)
	assert.Len(t, enc, MaxLength)
	back, err := Decode(enc)
	require.NoError(t, err)
	assert.Equal(t, id, back)
}

func TestOrderCheck(t *testing.T) {
	for _, tc := range []struct {
		order Order
		id    string
		err   string
	}{
		{Numeric, "123", ""},
		{Numeric, "-7", ""},
		{Numeric, strings.Repeat("9", MaxIDLength), ""},
		{Numeric, strings.Repeat("9", MaxIDLength+1), "longer than 512 bytes"},
		{Numeric, "", "empty"},
		{Numeric, "12a", "not a whole number"},
		{Numeric, "1.5", "not a whole number"},
		{Lexical, "TK-1 \"quoted\" \\ \x00\n", ""},
		{Lexical, "é✓", ""},
		{Lexical, strings.Repeat("é", MaxIDLength/2), ""},
		{Lexical, strings.Repeat("x", MaxIDLength+1), "longer than 512 bytes"},
		{Lexical, "bad\xffutf8", "not valid UTF-8"},
		{Lexical, "\xed\xa0\x80", "not valid UTF-8"}, // a surrogate
	} {
		err := tc.order.Check(tc.id)
		if tc.err == "" {
			assert.NoError(t, err, "%s %q", tc.order, tc.id)
			continue
		}
		if assert.Error(t, err, "%s %q", tc.order, tc.id) {
			assert.Contains(t, err.Error(), tc.err)
		}
	}
}

func TestOrderCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1", "2", -1}, {"10", "9", 1}, {"007", "7", 0}, {"-5", "3", -1}, {"-5", "-3", -1},
		{"-0", "0", 0}, {"123456789012345678901234567890", "123456789012345678901234567891", -1},
		{"99999999999999999999", "100000000000000000000", -1},
	} {
		assert.Equal(t, tc.want, Numeric.Compare(tc.a, tc.b), "%s vs %s", tc.a, tc.b)
		assert.Equal(t, -tc.want, Numeric.Compare(tc.b, tc.a), "%s vs %s", tc.b, tc.a)
	}
	assert.Equal(t, -1, Lexical.Compare("B", "a"))
	assert.Error(t, Numeric.Check("12a"))
	assert.Error(t, Numeric.Check("-"))
	assert.NoError(t, Lexical.Check("12a"))
	_, err := ParseOrder("random")
	assert.Error(t, err)
}

func FuzzDecodeCursor(f *testing.F) {
	f.Fuzz(func(t *testing.T, value string) {
		// The fast path answers only what the full path answers alike.
		if fast, ok := exactCursorID(value); ok {
			full, err := decode(value)
			if err != nil || full != fast {
				t.Fatalf("%q: the fast path read %q, the full path %q, %v", value, fast, full, err)
			}
		}
		id, err := Decode(value)
		if err != nil {
			var ce *Error
			if !assert.ErrorAs(t, err, &ce) {
				return
			}
			return
		}
		// What is accepted is a usable id, and its own cursor decodes to it.
		if id == "" || !utf8.ValidString(id) {
			t.Fatalf("accepted an unusable id %q from %q", id, value)
		}
		enc := Encode(id)
		raw, err := base64.StdEncoding.DecodeString(enc)
		if err != nil || !json.Valid(raw) {
			t.Fatalf("Encode(%q) = %q is not base64 of JSON", id, enc)
		}
		if len(enc) > MaxLength {
			t.Fatalf("Encode(%q) is %d bytes, more than MaxLength", id, len(enc))
		}
		back, err := Decode(enc)
		if err != nil || back != id {
			t.Fatalf("round trip of %q: got %q, %v", id, back, err)
		}
	})
}
