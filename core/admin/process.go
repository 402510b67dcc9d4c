package admin

import (
	"fmt"
	"strconv"
)

// Process is the host process: its memory and processors.
type Process struct {
	PID int `json:"pid"`
	// RSS is its resident set in bytes (its private memory and the pages
	// of its binary it mapped); 0 when unknown.
	RSS int64 `json:"rss_bytes,omitempty"`
	// Private is the part of RSS only this process holds; 0 when unknown.
	Private int64 `json:"private_bytes,omitempty"`
	// Heap is the Go heap in use, in bytes.
	Heap int64 `json:"heap_bytes"`
	// Procs is how many processors its Go code runs on now; BusyProcs
	// how many it takes while busy when it is paced (one while lightly
	// loaded, core/internal/procpace), 0 when it is not.
	Procs     int `json:"procs,omitempty"`
	BusyProcs int `json:"busy_procs,omitempty"`
}

// ProcsText says how many processors the host runs on, for the status
// page and `clawhost status`: "1 (all 4 while busy)", or "4"; "" when
// unknown.
func (p Process) ProcsText() string {
	switch {
	case p.Procs == 0:
		return ""
	case p.BusyProcs > 0:
		return fmt.Sprintf("%d (all %d while busy)", p.Procs, p.BusyProcs)
	default:
		return strconv.Itoa(p.Procs)
	}
}
