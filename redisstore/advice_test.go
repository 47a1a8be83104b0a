package redisstore

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAdvice: each cause Check names says what to do about it.
func TestAdvice(t *testing.T) {
	for _, cause := range []string{CauseUnreachable, CauseAuth, CauseMasterName, CauseReplica, CauseEviction, CauseOther} {
		assert.NotEmpty(t, (&CheckError{Cause: cause, Err: errors.New("x")}).Advice(), cause)
	}
	assert.Contains(t, (&CheckError{Cause: CauseEviction}).Advice(), "maxmemory-policy noeviction")
}
