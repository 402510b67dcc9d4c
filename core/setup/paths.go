// Package setup is `clawhost init` and what the other commands need of its
// result: the interactive (or scripted) setup that checks each chat
// platform's token live and writes the user's configuration outside any
// checkout — config.hcl in [ConfigDir], the tokens in clawhost.env beside it
// (0600), and a one-time owner code (core/ownerclaim) — and, for every
// command, where the configuration is found when -config is not given
// ([ConfigPath]) and the reading of clawhost.env at start ([LoadEnvFile]).
package setup

import (
	"os"
	"path/filepath"
)

// Names of the files init writes in the configuration directory.
const (
	ConfigFile = "config.hcl"
	EnvFile    = "clawhost.env"
)

// Getenv reads an environment variable (os.Getenv in production).
type Getenv func(string) string

// home is $HOME, or the user's home directory.
func home(getenv Getenv) string {
	if h := getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// ConfigDir is the user's clawhost configuration directory:
// $XDG_CONFIG_HOME/clawhost, by default ~/.config/clawhost.
func ConfigDir(getenv Getenv) string {
	if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "clawhost")
	}
	return filepath.Join(home(getenv), ".config", "clawhost")
}

// DataDir is the default data_dir of a configuration init writes:
// $XDG_STATE_HOME/clawhost, by default ~/.local/state/clawhost (the
// database and plugin state are state, not configuration or cache).
func DataDir(getenv Getenv) string {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "clawhost")
	}
	return filepath.Join(home(getenv), ".local", "state", "clawhost")
}

// Workspace is the default workspace of the agent: ~/clawhost-workspace.
func Workspace(getenv Getenv) string {
	return filepath.Join(home(getenv), "clawhost-workspace")
}

// ConfigPath is the configuration file a command reads when -config is not
// given: the user's (ConfigDir/config.hcl) when it exists, else
// ./config.hcl in the working directory (a checkout's example).
func ConfigPath(getenv Getenv) string {
	p := filepath.Join(ConfigDir(getenv), ConfigFile)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ConfigFile
}
