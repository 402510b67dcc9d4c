package config

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
}

func defaultStorage() *Storage { return &Storage{Engine: EngineSQLite} }

var engines = []string{EngineSQLite, EnginePostgres}

func (s *Storage) check(k *checker) {
	k.enum("engine", s.Engine, engines)
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
