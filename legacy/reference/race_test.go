//go:build race

package reference

// raceEnabled: the race detector makes a data set of 20,000 records a list
// about twenty times slower to make and check, and finds nothing in it a
// smaller one would not show, so the model check runs smaller under it.
const raceEnabled = true
