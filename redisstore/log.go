package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"
)

// LogTo sends the notices go-redis writes for itself (a connection
// dropped, a dial refused, a pool that waited) to l at debug level, in
// place of the standard logger's unstructured lines on stderr. The
// store's own faults are its OnState's and OnError's to report. go-redis
// keeps one logger per process, so this is per process too: the last
// call wins.
func LogTo(l *zap.Logger) { redis.SetLogger(zapLogging{l}) }

type zapLogging struct{ l *zap.Logger }

func (z zapLogging) Printf(_ context.Context, format string, v ...any) {
	if ce := z.l.Check(zap.DebugLevel, "go-redis"); ce != nil {
		ce.Write(zap.String("notice", fmt.Sprintf(format, v...)))
	}
}
