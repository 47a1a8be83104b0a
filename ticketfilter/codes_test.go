package ticketfilter

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLiveAgentCodes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		codes []Code
		want  string // the codes in order, as the design records them
		param string // a filter that takes them
		op    string
	}{
		{"status", StatusCodes(), "I N T P R X B A C W L", "status", "E"},
		{"channel_type", ChannelTypes(), "E B M I C W F A T Q S", "channel_type", "E"},
		{"DP", PeriodCodes(), "T Y L7D L30D L90D TW LW L2W LWW TM LM TY LY", "date_created", "DP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, strings.Join(CodeValues(tc.codes), " "))
			seen := map[string]bool{}
			for _, c := range tc.codes {
				assert.NotEmpty(t, c.Meaning, c.Code)
				assert.False(t, seen[c.Code], "%s twice", c.Code)
				seen[c.Code] = true
			}
			// Each code passes the default validator and one narrowed to
			// exactly these codes.
			for _, cfg := range []FilterConfig{{}, {StatusCodes: CodeValues(StatusCodes()), ChannelTypes: CodeValues(ChannelTypes()), PeriodCodes: CodeValues(PeriodCodes())}} {
				v := NewFilterValidator(cfg)
				for _, c := range tc.codes {
					_, err := v.Parse(fmt.Sprintf(`[[%q,%q,%q]]`, tc.param, tc.op, c.Code))
					assert.NoError(t, err, c.Code)
				}
			}
		})
	}
	assert.Contains(t, StatusCodes(), Code{"C", "open"})
	assert.Contains(t, StatusCodes(), Code{"L", "closed"})
	assert.Contains(t, ChannelTypes(), Code{"E", "email"})
}

func TestLiveAgentCodesAreReadOnly(t *testing.T) {
	s := StatusCodes()
	s[0] = Code{"open", "invented"}
	require.Equal(t, Code{"I", "init"}, StatusCodes()[0], "a caller's change stays its own")
	p := PeriodCodes()
	p[0].Code = "today"
	require.Equal(t, "T", PeriodCodes()[0].Code)
	c := ChannelTypes()
	c[0].Code = "email"
	require.Equal(t, "E", ChannelTypes()[0].Code)
}
