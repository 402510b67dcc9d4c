package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/clawhost/clawhost/core/store/postgres"
	"github.com/clawhost/clawhost/core/store/sqlite"
)

// Version, Commit and BuildDate are what `clawhost version` prints and the
// host reports. The binary sets them from its build (make build and make
// dist stamp them with -ldflags -X); left empty or "dev" — go build, go
// install — they come from the module and VCS information Go records in
// the binary (runtime/debug.ReadBuildInfo).
var (
	Version   = "dev"
	Commit    = ""
	BuildDate = ""
)

// build is a binary's identity as `clawhost version` prints it.
type build struct {
	version, commit, date string
	sqlite, postgres      int // store schema versions the binary knows
}

// thisBuild is the running binary's build: the stamped values, completed
// from Go's build information.
func thisBuild() build {
	info, _ := debug.ReadBuildInfo()
	b := resolveBuild(Version, Commit, BuildDate, info)
	b.sqlite, b.postgres = sqlite.SchemaVersion(), postgres.SchemaVersion()
	return b
}

// resolveBuild fills what the stamp leaves out from info (nil when the
// binary has none): the module's version when it was installed at one
// (go install module@v1.2.3), vcs.revision (short, "-dirty" when
// vcs.modified) and vcs.time.
func resolveBuild(version, commit, date string, info *debug.BuildInfo) build {
	b := build{version: version, commit: commit, date: date}
	if info == nil {
		return b
	}
	if (b.version == "" || b.version == "dev") && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.version = info.Main.Version
	}
	var rev, at string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if b.commit == "" && rev != "" {
		b.commit = rev[:min(len(rev), 7)]
		if modified {
			b.commit += "-dirty"
		}
	}
	if b.date == "" {
		b.date = at
	}
	return b
}

// String is the line `clawhost version` prints, e.g.
// "clawhost 0.9.0 (commit 649f459, built 2026-11-25T06:10:40Z, store schema sqlite 12 / postgres 8)".
func (b build) String() string {
	or := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	version := b.version
	if version == "" {
		version = "dev"
	}
	return fmt.Sprintf("clawhost %s (commit %s, built %s, store schema sqlite %d / postgres %d)",
		version, or(b.commit), or(b.date), b.sqlite, b.postgres)
}
