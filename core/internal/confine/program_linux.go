//go:build linux && !amd64

package confine

import "sync"

// program is the filter's BPF, compiled once per process (assemble).
var program = sync.OnceValues(assemble)
