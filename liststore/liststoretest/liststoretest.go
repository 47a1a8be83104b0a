// Package liststoretest holds what the tests of liststore's users need
// of it and no program should, as net/http/httptest does for net/http:
// it is imported by tests only.
package liststoretest

import (
	"fmt"

	"github.com/helpdesk-gateway/gateway/liststore"
	"github.com/helpdesk-gateway/gateway/liststore/internal/trust"
)

// TrustWalks makes the store's lists, those it holds and those it makes
// from now on, start proven, as if their walks had been seen to stay,
// until a sign (liststore's stay.go): for the tests of what windows serve
// and to whom, which start from an instance proven as a lone instance is
// after its first walk. s is a liststore.Memory or a value that embeds
// one (translate.MemoryStore); any other store is a test's mistake, and
// TrustWalks panics.
func TrustWalks(s liststore.WalkStore) {
	if !trust.Walks(s) {
		panic(fmt.Sprintf("liststoretest: %T keeps no proof of its walks", s))
	}
}
