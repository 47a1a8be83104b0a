// Command caddy is Caddy with its standard modules plus the help-desk
// gateway (helpdesk_gateway) and the reference legacy backend
// (helpdesk_legacy).
//
//	go run ./cmd/caddy run
//
// serves the default Caddyfile: the gateway on :8080 in front of the
// reference backend on 127.0.0.1:9080.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/helpdesk-gateway/gateway/caddymodule"
	_ "github.com/helpdesk-gateway/gateway/legacy/reference/referencemodule"
)

func main() {
	caddycmd.Main()
}
