// Package trust carries one hook from liststore to liststoretest, and to
// no one else (it is internal to liststore): the tests of the stores'
// users need to start from lists proven, which no program may ask for,
// so liststore exports no way to.
package trust

// Walks makes s, a liststore.Memory or a value that embeds one, trust its
// lists' walks (liststore's stay.go), and reports whether s is one. Set
// by liststore when it is loaded.
var Walks func(s any) bool
