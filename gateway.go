// Package gateway is the module's root package. It exists so that
//
//	xcaddy build --with github.com/helpdesk-gateway/gateway
//
// works as it does for other Caddy plugins: xcaddy imports the module path
// itself, and this package imports caddymodule, whose init registers the
// helpdesk_gateway handler, the admin.api.helpdesk admin endpoint and the
// `caddy helpdesk` command, and referencemodule, whose init registers the
// helpdesk_legacy reference backend the default Caddyfile runs. It holds
// no code of its own.
package gateway

import (
	_ "github.com/helpdesk-gateway/gateway/caddymodule"                      // registers the gateway
	_ "github.com/helpdesk-gateway/gateway/legacy/reference/referencemodule" // registers the reference backend
)
