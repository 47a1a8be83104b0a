package caddymodule

import "encoding/hex"

// Fingerprint is what a test reads of a running gateway's deployment.
type Fingerprint struct {
	Sum     string   // the whole fingerprint, in hex
	Key     string   // what the store's keys name, in hex: Sum, or a private value
	Private bool     // the store's entries are this instance's own
	Unknown []string // what of the backend the config does not describe
	Trusts  int      // trusted_proxies ranges of the reverse_proxy handlers after it
}

// Fingerprints returns the fingerprint of each running gateway found in
// the running config's routes, by the name of its server.
func Fingerprints() map[string]Fingerprint {
	out := map[string]Fingerprint{}
	gateways := runningGateways()
	for g, s := range findSites(gateways) {
		d := g.deployment()
		out[s.server] = Fingerprint{Sum: hex.EncodeToString(d.sum[:]), Key: hex.EncodeToString(d.key[:]), Private: d.private,
			Unknown: d.unknown, Trusts: len(d.trust)}
	}
	return out
}
