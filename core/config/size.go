package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Size is an amount of memory written in HCL as a number and a unit:
// "2GB", "512MB", "1.5GB". The units are B, KB, MB, GB and TB, each 1024
// times the one before as memory is counted (free, /proc/meminfo); KiB,
// MiB, GiB and TiB are the same units. Load refuses a value that does not
// parse or is not positive.
type Size string

// Bytes returns s in bytes, 0 when s is empty or does not parse.
func (s Size) Bytes() int64 {
	n, err := s.parse()
	if err != nil {
		return 0
	}
	return n
}

// sizeUnits are the units Size accepts, by their lower-case spelling.
var sizeUnits = map[string]int64{
	"b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

func (s Size) parse() (int64, error) {
	str := strings.TrimSpace(string(s))
	i := strings.IndexFunc(str, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("%q is not a size", string(s))
	}
	unit, ok := sizeUnits[strings.ToLower(strings.TrimSpace(str[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q has no unit clawhost knows", string(s))
	}
	v, err := strconv.ParseFloat(str[:i], 64)
	if err != nil || math.IsInf(v*float64(unit), 0) || v*float64(unit) >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size", string(s))
	}
	return int64(v * float64(unit)), nil
}

// size checks an optional size setting: empty, or a positive size.
func (k *checker) size(name string, s Size) {
	if s == "" {
		return
	}
	v, err := s.parse()
	switch {
	case err != nil:
		k.errorf(k.valueRange(name), "Invalid size for "+k.qualified(name),
			"%q is not a size: write a number with a unit, such as \"2GB\", \"512MB\" or \"1.5GB\" (B, KB, MB, GB, TB; 1 GB = 1024 MB).", string(s))
	case v <= 0:
		k.errorf(k.valueRange(name), "Invalid size for "+k.qualified(name),
			"The size must be positive, not %q. To keep no claude process warm between turns, set one_shot = true.", string(s))
	}
}
