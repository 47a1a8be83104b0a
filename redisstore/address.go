package redisstore

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Kind is how the store's servers are laid out.
type Kind int

const (
	// Single is one server: redis:// or rediss://.
	Single Kind = iota
	// Cluster is a Redis Cluster, reached through any of its nodes:
	// redis+cluster:// or rediss+cluster://.
	Cluster
	// Sentinel is a master the sentinels name, followed across
	// failovers: redis+sentinel:// or rediss+sentinel://.
	Sentinel
)

func (k Kind) String() string {
	switch k {
	case Cluster:
		return "cluster"
	case Sentinel:
		return "sentinel"
	}
	return "single"
}

// Address is a readahead_store URL as ParseAddress reads it.
type Address struct {
	Kind Kind
	// Scheme is the URL's scheme as written.
	Scheme string
	// Hosts are the servers' host:port: the one server's, the cluster
	// nodes' to start from, or the sentinels'.
	Hosts []string
	TLS   bool
	// Username and Password authenticate to the data servers (the
	// server, every cluster node, the master and its replicas); a
	// sentinel is asked with them too only with SentinelAuth
	// (sentinel_auth=same), as most sentinels ask no password.
	Username, Password string
	SentinelAuth       bool
	// Master is the name the sentinels know the master by.
	Master string
	// DB is the database: 0 on a cluster, which has no other.
	DB int
	// Query is a single server's query (go-redis's options), as written.
	Query string
}

// Want is how each spelling is written, for errors a person acts on.
const Want = "write redis://[user:password@]host:port/db, " +
	"redis+cluster://[user:password@]host:port[,host:port...], " +
	"or redis+sentinel://[user:password@]host:port[,host:port...]/<master name>[/db]; " +
	"rediss, rediss+cluster and rediss+sentinel for TLS"

// ParseAddress reads a readahead_store URL. Its errors never quote the
// password, nor the URL (see Redact for a form of it to show).
func ParseAddress(raw string) (Address, error) {
	var a Address
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return a, errors.New("not a URL")
	}
	a.Scheme = scheme
	base, _ := strings.CutSuffix(scheme, "+cluster")
	if base != scheme {
		a.Kind = Cluster
	} else if base, _ = strings.CutSuffix(scheme, "+sentinel"); base != scheme {
		a.Kind = Sentinel
	}
	switch base {
	case "redis":
	case "rediss":
		a.TLS = true
	default:
		return a, fmt.Errorf("the scheme %q is not redis, redis+cluster or redis+sentinel (rediss for TLS)", clip(scheme))
	}
	// The credentials end at the last '@', so that a password holding
	// an unescaped '/' or '@' is still taken whole, never as a host.
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, pass, hasPass := strings.Cut(rest[:at], ":")
		var err error
		if a.Username, err = url.PathUnescape(user); err != nil {
			return a, errors.New("the user name is not escaped as a URL's")
		}
		if hasPass {
			if a.Password, err = url.PathUnescape(pass); err != nil {
				return a, errors.New("the password is not escaped as a URL's (write %40 for @, %2F for /, %3A for :)")
			}
		}
		rest = rest[at+1:]
	}
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		return a, errors.New("a URL fragment (#) means nothing here")
	}
	rest, query, _ := strings.Cut(rest, "?")
	hosts, path, _ := strings.Cut(rest, "/")
	if hosts == "" {
		return a, errors.New("names no host")
	}
	for _, h := range strings.Split(hosts, ",") {
		hp, err := hostPort(h, a.Kind)
		if err != nil {
			return a, err
		}
		a.Hosts = append(a.Hosts, hp)
	}
	if err := a.parseQuery(query); err != nil {
		return a, err
	}
	return a, a.parsePath(path)
}

// hostPort checks one host of the list and gives it its default port.
func hostPort(h string, k Kind) (string, error) {
	if h == "" {
		return "", errors.New("an empty host in the list (host:port,host:port)")
	}
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		// No port: the default one.
		host, port = h, "6379"
		if k == Sentinel {
			port = "26379"
		}
		if inner, ok := strings.CutPrefix(h, "["); ok {
			host, ok = strings.CutSuffix(inner, "]")
			if !ok {
				return "", fmt.Errorf("the host %q is not a host name or address", clip(h))
			}
		} else if strings.Contains(h, ":") {
			return "", fmt.Errorf("the host %q is not host:port (write an IPv6 address in brackets, [::1]:6379)", clip(h))
		}
	}
	if host == "" || strings.ContainsAny(host, " /?#@[]%\t\r\n\x00") {
		return "", fmt.Errorf("the host %q is not a host name or address", clip(h))
	}
	if strings.Contains(host, ":") && net.ParseIP(host) == nil {
		return "", fmt.Errorf("the host %q is not an IPv6 address", clip(h))
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("the port of %q is not a number from 1 to 65535", clip(h))
	}
	return net.JoinHostPort(host, port), nil
}

// parseQuery keeps a single server's query for go-redis, which reads its
// options there; the other spellings take only sentinel_auth.
func (a *Address) parseQuery(query string) error {
	q, err := url.ParseQuery(query)
	if err != nil {
		return errors.New("the query is not a URL's")
	}
	if a.Kind == Single {
		for k := range q {
			if strings.Contains(strings.ToLower(k), "password") {
				return errors.New("a password goes before the host (user:password@host), not in the query")
			}
		}
		a.Query = query
		return nil
	}
	for k, v := range q {
		switch {
		case k == "sentinel_auth" && a.Kind == Sentinel && len(v) == 1 && (v[0] == "same" || v[0] == "none"):
			a.SentinelAuth = v[0] == "same"
		case k == "sentinel_auth" && a.Kind == Sentinel:
			return errors.New(`sentinel_auth is "same" (the sentinels ask the URL's user and password) or "none" (the default)`)
		default:
			return fmt.Errorf("the parameter %q means nothing in a %s URL", clip(k), a.Kind)
		}
	}
	return nil
}

// parsePath reads the database, and a sentinel master's name before it.
func (a *Address) parsePath(path string) error {
	path = strings.TrimSuffix(path, "/")
	if a.Kind == Sentinel {
		name, db, _ := strings.Cut(path, "/")
		if name == "" {
			return errors.New("names no master: write the name the sentinels know it by after the hosts, /mymaster")
		}
		if strings.ContainsAny(name, " \t\r\n\x00") {
			return errors.New("the master name holds a space or a control character")
		}
		a.Master, path = name, db
	}
	if a.Kind == Single && len(a.Hosts) > 1 {
		return errors.New("names several hosts: write redis+cluster:// for a cluster, redis+sentinel://.../<master name> for sentinels")
	}
	if path == "" {
		return nil
	}
	n, err := strconv.Atoi(path)
	if err != nil || n < 0 || strconv.Itoa(n) != path {
		return fmt.Errorf("the database %q is not a number such as 0", clip(path))
	}
	if a.Kind == Cluster && n != 0 {
		return errors.New("a cluster has database 0 only: leave the database out")
	}
	a.DB = n
	return nil
}

// clip shortens what an error quotes of the input.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// Redacted is the address as a URL with the password hidden, to show.
func (a Address) Redacted() string {
	var b strings.Builder
	b.WriteString(a.Scheme)
	b.WriteString("://")
	if a.Username != "" || a.Password != "" {
		b.WriteString(url.PathEscape(a.Username))
		if a.Password != "" {
			b.WriteString(":xxxxx")
		}
		b.WriteByte('@')
	}
	b.WriteString(strings.Join(a.Hosts, ","))
	switch {
	case a.Kind == Sentinel:
		b.WriteString("/" + a.Master)
		if a.DB != 0 {
			b.WriteString("/" + strconv.Itoa(a.DB))
		}
	case a.Kind == Single:
		b.WriteString("/" + strconv.Itoa(a.DB))
		if a.Query != "" {
			b.WriteString("?" + a.Query) // go-redis's options: never a password
		}
	}
	if a.SentinelAuth {
		b.WriteString("?sentinel_auth=same")
	}
	return b.String()
}

// Redact returns raw with what may be its password hidden, for an error
// about a URL ParseAddress could not read: everything between "://" and
// the last '@' but the user name, and a query that names a password.
func Redact(raw string) string {
	i := strings.Index(raw, "://")
	j := strings.LastIndex(raw, "@")
	out, tail := raw, 0
	switch {
	case j >= 0 && (i < 0 || j < i+3):
		return "(not shown)" // no place a password could be told from the rest
	case j >= 0:
		tail = j
		if user, _, hasPass := strings.Cut(raw[i+3:j], ":"); hasPass {
			out = raw[:i+3] + user + ":xxxxx" + raw[j:]
			tail = len(raw[:i+3]) + len(user) + len(":xxxxx")
		}
	}
	if k := strings.IndexByte(out[tail:], '?'); k >= 0 && strings.Contains(strings.ToLower(out[tail+k:]), "pass") {
		out = out[:tail+k] + "?(not shown)"
	}
	return out
}
