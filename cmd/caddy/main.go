// Command caddy is Caddy with its standard modules plus the help-desk
// gateway and the reference legacy backend.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func main() {
	caddycmd.Main()
}
