// Package redistest runs a real redis-server on loopback for tests: on a
// port the test picks, with nothing written to disk, stopped when the
// test ends. A machine without redis-server skips the test, saying how
// to install it; in CI it fails the test (see package testdeps), and
// .ci/run installs it.
package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helpdesk-gateway/gateway/testdeps"
)

// Server is one redis-server process, which a test may kill, restart and
// flush.
type Server struct {
	t    testing.TB
	bin  string
	port int
	pre  []string // before the port: a config file and --sentinel
	args []string
	dir  string // the working directory, kept across restarts (a cluster node's nodes.conf)

	mu  sync.Mutex
	cmd *exec.Cmd
}

// Start starts redis-server on 127.0.0.1 at a free port, with extra
// arguments (such as "--maxmemory", "1mb"), and stops it when the test
// ends. When redis-server is not installed it skips the test, or fails it
// in CI (testdeps.Missing).
func Start(t testing.TB, extra ...string) *Server {
	t.Helper()
	s := newServer(t, freePort(t), extra...)
	s.start()
	return s
}

// newServer returns a server not started yet, stopped when the test ends.
func newServer(t testing.TB, port int, extra ...string) *Server {
	t.Helper()
	s := &Server{t: t, bin: binary(t), port: port, args: extra, dir: t.TempDir()}
	t.Cleanup(s.Kill)
	return s
}

// binary returns redis-server's path, or skips the test.
func binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("HELPDESK_REDIS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			testdeps.Missing(t, "redis-server is not installed (apt-get install redis-server, or set HELPDESK_REDIS_SERVER); .ci/run installs it")
		}
	}
	return bin
}

// URL is the server's redis:// address, database 0.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.port) }

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

func (s *Server) start() {
	s.t.Helper()
	args := append(append(slices.Clip(s.pre), "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning"), s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if out, err := s.Do("PING"); err == nil && out == "PONG" {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server did not answer PING on %s within 10s", s.Addr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Kill stops the server at once, as a crash does; what it held is lost.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
}

// Restart kills the server and starts a new one, empty, on the same port
// (a cluster node with its nodes.conf: the same node, its slots kept).
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	s.start()
}

// Flush empties every database, as FLUSHALL does.
func (s *Server) Flush() {
	s.t.Helper()
	if _, err := s.Do("FLUSHALL"); err != nil {
		s.t.Fatalf("FLUSHALL: %v", err)
	}
}

// Do sends one command to the server: see Command.
func (s *Server) Do(args ...string) (string, error) { return Command(s.Addr(), args...) }

// Command sends one command to the Redis-protocol server at addr on a
// connection of its own and returns its answer as text: a simple string
// or an integer without its type byte, a bulk string's contents; an error
// answer is an error; an array's elements, one a line. Enough for PING,
// FLUSHALL, CLIENT PAUSE, INFO, CLUSTER and SENTINEL commands.
func Command(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	return reply(bufio.NewReader(c))
}

// reply reads one answer (see Command).
func reply(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	switch {
	case line == "":
		return "", fmt.Errorf("empty answer")
	case line[0] == '-':
		return "", fmt.Errorf("%s", line[1:])
	case line[0] == '*':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", fmt.Errorf("redis: %q", line)
		}
		var out []string
		for range n {
			v, err := reply(br)
			if err != nil {
				return "", err
			}
			out = append(out, v)
		}
		return strings.Join(out, "\n"), nil
	case line[0] != '$':
		return line[1:], nil
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < -1 {
		return "", fmt.Errorf("redis: %q", line)
	}
	if n == -1 {
		return "", nil
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(br, body); err != nil {
		return "", err
	}
	return string(body[:n]), nil
}

// freePort returns a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
