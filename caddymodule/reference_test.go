package caddymodule

// The tests run the reference backend (helpdesk_legacy) in their
// Caddyfiles, as the default Caddyfile does, and refuse its bad configs
// beside the gateway's (config_table_test.go).
import _ "github.com/helpdesk-gateway/gateway/legacy/reference/referencemodule"
