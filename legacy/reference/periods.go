package reference

import (
	"fmt"
	"strings"
	"time"

	"github.com/helpdesk-gateway/gateway/ticketfilter"
)

// periodCodes are the DP codes the backend computes: LiveAgent's own,
// from ticketfilter.PeriodCodes.
var periodCodes = ticketfilter.CodeValues(ticketfilter.PeriodCodes())

// period returns the bounds [from, to) of the DP period code as date-time
// text, which compares in time order, for a backend whose clock reads now.
// Days start at midnight in now's location, taken to be that of the
// records' date-times.
//
// The spans are those of Quality Unit's Gpf_SqlBuilder_Filter, which
// LiveAgent's filters come from: T and Y are whole days; L7D, L30D and L90D
// run from midnight 7, 30 or 90 days ago to the end of today (so L7D spans
// 8 calendar days); TW and LW are whole weeks from Monday to Sunday; L2W
// is the two whole weeks before this one; LWW is Monday to Friday of last
// week; TM, LM, TY and LY are whole calendar months and years. Gpf writes
// each end as 23:59:59 of the last day; here it is the next midnight,
// excluded, which is the same to the second. Gpf's weeks put a Sunday into
// the week after it (its week starts at the Monday after the last
// Sunday); here a Sunday ends its week, as a Monday-to-Sunday week does.
func period(code string, now time.Time) (from, to string, err error) {
	y, m, d := now.Date()
	day := func(offset int) time.Time { return time.Date(y, m, d+offset, 0, 0, 0, 0, now.Location()) }
	month := func(offset int) time.Time { return time.Date(y, m+time.Month(offset), 1, 0, 0, 0, 0, now.Location()) }
	year := func(offset int) time.Time { return time.Date(y+offset, 1, 1, 0, 0, 0, 0, now.Location()) }
	monday := -(int(now.Weekday()) + 6) % 7 // days from today back to this week's Monday
	var start, end time.Time
	switch code {
	case "T":
		start, end = day(0), day(1)
	case "Y":
		start, end = day(-1), day(0)
	case "L7D":
		start, end = day(-7), day(1)
	case "L30D":
		start, end = day(-30), day(1)
	case "L90D":
		start, end = day(-90), day(1)
	case "TW":
		start, end = day(monday), day(monday+7)
	case "LW":
		start, end = day(monday-7), day(monday)
	case "L2W":
		start, end = day(monday-14), day(monday)
	case "LWW":
		start, end = day(monday-7), day(monday-2)
	case "TM":
		start, end = month(0), month(1)
	case "LM":
		start, end = month(-1), month(0)
	case "TY":
		start, end = year(0), year(1)
	case "LY":
		start, end = year(-1), year(0)
	default:
		return "", "", fmt.Errorf("DP period %q: the backend knows LiveAgent's period codes %s", code, strings.Join(periodCodes, ", "))
	}
	return dateTime(start), dateTime(end), nil
}
