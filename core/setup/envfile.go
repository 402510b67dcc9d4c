package setup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ReadEnvFile parses a clawhost.env file: KEY=VALUE lines; blank lines and
// lines starting with # are skipped; "export " before KEY is allowed; a
// value in double or single quotes is unquoted (double quotes with Go's
// escapes). A malformed line is an error naming its line, never its value.
func ReadEnvFile(data []byte) ([][2]string, error) {
	var out [][2]string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		key, val, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok || !validKey(key) {
			return nil, fmt.Errorf("line %d: want KEY=VALUE", n)
		}
		val = strings.TrimSpace(val)
		switch {
		case len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"':
			u, err := strconv.Unquote(val)
			if err != nil {
				return nil, fmt.Errorf("line %d: %s: bad quoting", n, key)
			}
			val = u
		case len(val) >= 2 && val[0] == '\'' && val[len(val)-1] == '\'':
			val = val[1 : len(val)-1]
		}
		out = append(out, [2]string{key, val})
	}
	return out, sc.Err()
}

func validKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// EnvFileFor is the env file of a configuration file: clawhost.env in its
// directory.
func EnvFileFor(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), EnvFile)
}

// LoadEnvFile reads the env file beside configPath, if there is one, and
// sets each variable that is not already set in the environment (the
// environment wins: a variable given on the command line or by a service
// manager overrides the file). It returns the names it set. A file that
// its group or others may read is refused: it holds tokens.
func LoadEnvFile(configPath string, lookup func(string) (string, bool), setenv func(string, string) error) ([]string, error) {
	path := EnvFileFor(configPath)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("read %s: it holds secrets and is mode %04o (readable by others); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	vars, err := ReadEnvFile(data)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var set []string
	for _, kv := range vars {
		if _, ok := lookup(kv[0]); ok {
			continue
		}
		if err := setenv(kv[0], kv[1]); err != nil {
			return set, fmt.Errorf("read %s: set %s: %w", path, kv[0], err)
		}
		set = append(set, kv[0])
	}
	return set, nil
}
