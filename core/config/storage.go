package config

import "time"

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
	// logged (the status page shows it with the password replaced).
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
}

// DefaultLeaseTTL is storage.lease_ttl when unset.
const DefaultLeaseTTL = Duration("15s")

func defaultStorage() *Storage {
	return &Storage{Engine: EngineSQLite, LeaseTTL: DefaultLeaseTTL}
}

var engines = []string{EngineSQLite, EnginePostgres}

func (s *Storage) check(k *checker) {
	k.enum("engine", s.Engine, engines)
	k.duration("lease_ttl", s.LeaseTTL)
	if d := s.LeaseTTL.Duration(); d > 0 && d < time.Second {
		k.errorf(k.valueRange("lease_ttl"), "lease_ttl too short", "A lease of %s cannot be renewed reliably; use 1s or more (the default is %s).", d, DefaultLeaseTTL)
	}
	switch {
	case s.Engine == EnginePostgres && s.URL == "":
		k.errorf(k.valueRange("engine"), "Missing storage.url",
			`engine = "postgres" needs the server's connection string: url = env("CLAWHOST_DATABASE_URL"), with for example postgres://clawhost:PASSWORD@db.example:5432/clawhost in that variable.`)
	case s.Engine == EngineSQLite && s.URL != "":
		// Pointed at the engine: a snippet of the url line could show a
		// password written into the file.
		k.errorf(k.valueRange("engine"), "Unexpected storage.url",
			`The sqlite engine keeps its database in data_dir and takes no url; set engine = "postgres" to use a PostgreSQL server.`)
	}
}
