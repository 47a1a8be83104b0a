package caddymodule

import (
	"net/http"
	"strconv"

	"github.com/helpdesk-gateway/gateway/cursor"
)

// writeError answers with a JSON error body: {"message": "..."}. Every
// error the gateway itself makes has this shape, so clients parse one form.
func writeError(w http.ResponseWriter, status int, message string) {
	body := cursor.AppendJSONMessage(make([]byte, 0, len(message)+16), message)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
