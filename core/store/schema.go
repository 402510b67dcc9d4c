package store

import "fmt"

// SchemaTooNewError is what an engine's Open returns for a database whose
// schema a newer clawhost migrated: an older binary cannot know what the
// newer steps changed, so it refuses the database rather than guess (a
// downgrade is never silent). errors.As finds it through Open's wrapping.
type SchemaTooNewError struct {
	// Engine is "sqlite" or "postgres".
	Engine string
	// Found is the database's schema version; Known the newest this binary
	// migrates to.
	Found, Known int
}

// Error says what was found and the two ways out.
func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("database schema version %d is newer than this binary's %d: the %s database was upgraded by a newer clawhost; "+
		"run that version (clawhost version prints the store schema a binary knows) or restore a copy of the database from before the upgrade",
		e.Found, e.Known, e.Engine)
}
