package redisstore

// causeAdvice says what to do about each cause Check names.
var causeAdvice = map[string]string{
	CauseUnreachable: "no connection to it, or no answer within readahead_store_timeout; check its address, port and firewall, and that it runs",
	CauseAuth:        "it refused the credentials; check the user and password in readahead_store (redis://user:password@host:port)",
	CauseMasterName:  "the sentinels answered but know no master by the name in readahead_store (redis+sentinel://host:port/<master name>); use the name of their `sentinel monitor` line",
	CauseReplica:     "the server is a replica, which cannot keep the walks; point readahead_store at the master, or at its sentinels",
	CauseEviction:    "its maxmemory-policy can drop a walk's entry before it expires; set maxmemory-policy noeviction (docs/shared-store.md, Memory)",
	CauseOther:       "it answered with an error",
}

// Advice says what an operator does about the cause Check found, for the
// gateway's log: where to look, what to change.
func (e *CheckError) Advice() string { return causeAdvice[e.Cause] }
