package config

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Storage engines (storage { engine }).
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// Storage is the storage {} block: where the journal, the outbox, the
// sessions and the pairing state live.
type Storage struct {
	// Engine is "sqlite" (default: one database file in data_dir, for one
	// host) or "postgres" (a PostgreSQL server that several hosts can
	// share).
	Engine string `hcl:"engine,optional"`
	// URL is the PostgreSQL connection string (url), e.g.
	// env("CLAWHOST_DATABASE_URL") = "postgres://clawhost:…@db:5432/clawhost".
	// Required with engine = "postgres", refused with "sqlite". It holds a
	// password: give it with env() rather than in the file; it is never
	// logged (the status page shows it with the password replaced). A
	// server not on this machine (a host other than a Unix socket
	// directory, localhost or a loopback address) needs sslmode=verify-full
	// (or require, verify-ca) in the url or PGSSLMODE: without it the
	// password and every message would cross the network in clear text.
	URL string `hcl:"url,optional"`

	// HostID names this host among the hosts sharing a PostgreSQL
	// database (host_id): it owns the journal entries it works on and
	// holds the lease "host/<id>" while it runs. Default: the machine's
	// host name. Two hosts on one machine need one each.
	HostID string `hcl:"host_id,optional"`
	// LeaseTTL is how long a host's leases last without renewal
	// (lease_ttl); they are renewed every third of it. A host that dies
	// is taken over by the others within this time. Default "15s".
	LeaseTTL Duration `hcl:"lease_ttl,optional"`

	// Durability is what a write of the sqlite engine survives before
	// anything leaves the host on its strength (durability). "full"
	// (default): the death of the process at any instant (kill -9, the
	// OOM killer, a panic) and an operating-system crash or power loss —
	// the accept a message's ack stands on and the send attempt a reply's
	// send stands on are fsynced first; no message is lost and no reply
	// sent twice after either. "process": the death of the process at any
	// instant, with the same guarantees, but no fsync: an operating-system
	// crash or power loss can roll back the writes the system had not yet
	// written to disk (at most about the last 30 s with Linux's defaults),
	// so after one a message acked in that time can be lost (unless its
	// platform sends it again) and one answered in that time answered
	// again (docs/guarantees.md lists each case). It saves the fsync
	// of each inbound batch and of each reply (0.1–0.6 ms on the
	// development machine's disk, more on network block storage; see
	// docs/performance.md). Refused with engine = "postgres", whose
	// durability is the server's (synchronous_commit).
	Durability string `hcl:"durability,optional"`
}

// Storage durabilities (storage { durability }).
const (
	DurabilityFull    = "full"
	DurabilityProcess = "process"
)

// DefaultLeaseTTL is storage.lease_ttl when unset.
const DefaultLeaseTTL = Duration("15s")

func defaultStorage() *Storage {
	return &Storage{Engine: EngineSQLite, LeaseTTL: DefaultLeaseTTL, Durability: DurabilityFull}
}

var (
	engines      = []string{EngineSQLite, EnginePostgres}
	durabilities = []string{DurabilityFull, DurabilityProcess}
)

func (s *Storage) check(k *checker) {
	k.enum("engine", s.Engine, engines)
	k.enum("durability", s.Durability, durabilities)
	k.duration("lease_ttl", s.LeaseTTL)
	if d := s.LeaseTTL.Duration(); d > 0 && d < time.Second {
		k.errorf(k.valueRange("lease_ttl"), "lease_ttl too short", "A lease of %s cannot be renewed reliably; use 1s or more (the default is %s).", d, DefaultLeaseTTL)
	}
	if s.Engine == EnginePostgres && s.Durability == DurabilityProcess {
		k.errorf(k.valueRange("durability"), "Unexpected storage.durability",
			`durability sets what the sqlite engine fsyncs; a PostgreSQL server's durability is its own (synchronous_commit). Remove durability or use engine = "sqlite".`)
	}
	switch {
	case s.Engine == EnginePostgres && s.URL == "":
		k.errorf(k.valueRange("engine"), "Missing storage.url",
			`engine = "postgres" needs the server's connection string: url = env("CLAWHOST_DATABASE_URL"), with for example postgres://clawhost:PASSWORD@db.example:5432/clawhost in that variable.`)
	case s.Engine == EnginePostgres:
		if host, mode, ok := PostgresTLS(s.URL, k.cfg.lookupEnv); !ok {
			// Pointed at the engine, as below: the url may hold a password.
			k.errorf(k.valueRange("engine"), "PostgreSQL server reached without TLS",
				"The server %s is not on this machine, and %s lets the connection (the password, every message) go in clear text or to an impostor. "+
					"Add sslmode=verify-full to the url (with sslrootcert=<the server's CA file> unless the system trusts it), or at least sslmode=require.",
				host, describeSSLMode(mode))
		}
	case s.Engine == EngineSQLite && s.URL != "":
		// Pointed at the engine: a snippet of the url line could show a
		// password written into the file.
		k.errorf(k.valueRange("engine"), "Unexpected storage.url",
			`The sqlite engine keeps its database in data_dir and takes no url; set engine = "postgres" to use a PostgreSQL server.`)
	}
}

// insecureSSLModes are the sslmode values that may connect without TLS
// ("" is libpq's default, prefer).
var insecureSSLModes = []string{"", "disable", "allow", "prefer"}

// PostgresTLS reports whether the PostgreSQL connection string u (a URL or
// key=value string) is safe to use: ok when every host it names is on this
// machine (a Unix socket directory, localhost or a loopback address) or
// when its sslmode (else the PGSSLMODE variable, read with lookupEnv)
// requires TLS. Otherwise host is the first remote host and mode the
// sslmode in effect. A string that does not parse is ok here: the engine
// reports it.
//
// Refusing was chosen over defaulting to verify-full: a silent default
// fails later, at the first connection, with a certificate error that
// does not say which setting caused it.
func PostgresTLS(u string, lookupEnv func(string) (string, bool)) (host, mode string, ok bool) {
	host, mode = PostgresTarget(u, lookupEnv)
	if host != "" && slices.Contains(insecureSSLModes, mode) {
		return host, mode, false
	}
	return "", mode, true
}

// PostgresTarget returns the first host of the connection string u that
// is not on this machine ("" when all are, or u does not parse) and the
// sslmode in effect: the string's, else PGSSLMODE (read with lookupEnv,
// which may be nil), else "".
func PostgresTarget(u string, lookupEnv func(string) (string, bool)) (remote, mode string) {
	hosts, mode, modeSet, parsed := postgresHosts(u)
	if !parsed {
		return "", ""
	}
	if lookupEnv == nil {
		lookupEnv = func(string) (string, bool) { return "", false }
	}
	if v, found := lookupEnv("PGSSLMODE"); found && !modeSet {
		mode = v
	}
	if v, found := lookupEnv("PGHOST"); found && len(hosts) == 0 {
		hosts = strings.Split(v, ",")
	}
	for _, h := range hosts {
		if !localPostgresHost(h) {
			return h, mode
		}
	}
	return "", mode
}

// postgresHosts returns the hosts and the sslmode (modeSet: written) of a
// PostgreSQL URL or key=value string.
func postgresHosts(s string) (hosts []string, mode string, modeSet, ok bool) {
	if rest, found := strings.CutPrefix(s, "postgres://"); found || strings.HasPrefix(s, "postgresql://") {
		if !found {
			rest = strings.TrimPrefix(s, "postgresql://")
		}
		// url.Parse refuses several host:port pairs; cut the authority
		// by hand.
		auth, tail := rest, ""
		if i := strings.IndexAny(rest, "/?"); i >= 0 {
			auth, tail = rest[:i], rest[i:]
		}
		if i := strings.LastIndex(auth, "@"); i >= 0 {
			auth = auth[i+1:]
		}
		for _, hp := range strings.Split(auth, ",") {
			if hp == "" {
				continue
			}
			if h, _, err := net.SplitHostPort(hp); err == nil {
				hp = h
			}
			hosts = append(hosts, strings.Trim(hp, "[]"))
		}
		_, query, _ := strings.Cut(tail, "?")
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, "", false, false
		}
		if v := q["host"]; len(v) > 0 {
			hosts = strings.Split(v[len(v)-1], ",")
		}
		if v := q["sslmode"]; len(v) > 0 {
			mode, modeSet = v[len(v)-1], true
		}
		for i, h := range hosts {
			if unescaped, err := url.PathUnescape(h); err == nil {
				hosts[i] = unescaped
			}
		}
		return hosts, mode, modeSet, true
	}
	if !strings.Contains(s, "=") {
		return nil, "", false, false
	}
	for _, kv := range strings.Fields(s) {
		k, v, _ := strings.Cut(kv, "=")
		v = strings.Trim(v, "'")
		switch k {
		case "host", "hostaddr":
			hosts = strings.Split(v, ",")
		case "sslmode":
			mode, modeSet = v, true
		}
	}
	return hosts, mode, modeSet, true
}

// localPostgresHost reports whether h is on this machine: empty (libpq's
// default Unix socket), a socket directory, localhost or a loopback
// address.
func localPostgresHost(h string) bool {
	if h == "" || strings.HasPrefix(h, "/") || strings.HasPrefix(h, "@") || strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// describeSSLMode names mode for a diagnostic.
func describeSSLMode(mode string) string {
	if mode == "" {
		return "no sslmode (libpq's default, prefer: TLS only if the server offers it, never verified)"
	}
	return "sslmode=" + mode
}
