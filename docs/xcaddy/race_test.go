//go:build race

package xcaddy_test

// raceBuild: xcaddy builds with -race too, reusing the packages the tests
// were compiled with. Not a skip: the test runs the same either way.
const raceBuild = true
