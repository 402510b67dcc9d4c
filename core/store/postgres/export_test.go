package postgres

// SchemaVersion is the schema version this binary migrates to.
func SchemaVersion() int { return schemaVersion }
