package pageheader

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMergeTokens(t *testing.T) {
	for _, tc := range []struct {
		name string
		have []string // the field's values before
		add  []string
		want []string
	}{
		{"absent", nil, []string{"next_page_cursor"}, []string{"next_page_cursor"}},
		{"appended", []string{"X-Request-Id"}, []string{"next_page_cursor"}, []string{"X-Request-Id, next_page_cursor"}},
		{"several lines become one", []string{"A, B", "C"}, []string{"next_page_cursor", "Link"}, []string{"A, B, C, next_page_cursor, Link"}},
		{"already there in another case: untouched", []string{"a,  NEXT_PAGE_CURSOR"}, []string{"next_page_cursor"}, []string{"a,  NEXT_PAGE_CURSOR"}},
		{"duplicates and empty items go when rewriting", []string{"A, a, , B"}, []string{"Link"}, []string{"A, B, Link"}},
		{"a wildcard is kept, the name still added (credentialed requests read * literally)", []string{"*"}, []string{"next_page_cursor"}, []string{"*, next_page_cursor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.have {
				h.Add("Access-Control-Expose-Headers", v)
			}
			mergeTokens(h, "Access-Control-Expose-Headers", tc.add)
			assert.Equal(t, tc.want, h.Values("Access-Control-Expose-Headers"))
		})
	}
}

func TestValidHeaderName(t *testing.T) {
	for name, want := range map[string]bool{
		"Link": true, "X-Page": true, "x_total~count": true,
		"": false, "X Page": false, "X-Page:": false, "Ü": false, "a\r\nb": false,
	} {
		assert.Equal(t, want, ValidName(name), name)
	}
}
