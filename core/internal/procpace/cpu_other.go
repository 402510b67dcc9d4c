//go:build !unix

package procpace

import "time"

// cpuTime is not measured here: Start leaves the processors alone.
func cpuTime() (time.Duration, bool) { return 0, false }
