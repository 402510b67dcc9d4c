package ownersession

import (
	"os"
	"strconv"
)

// processRuns reports whether process pid runs (its /proc entry exists).
func processRuns(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}
