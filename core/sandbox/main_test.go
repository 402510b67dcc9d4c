package sandbox

import (
	"os"
	"testing"
)

// TestMain makes the test binary the sandbox helper (run with ZygoteArg, its defences
// weakened as ZYGOTE_WEAKEN says: Testing.Weaken) and BenchmarkSandboxZygote's
// (ZYGOTE_SPIKE=1), as clawhost's binary is the helper.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == ZygoteArg {
		Testing.Weaken = os.Getenv("ZYGOTE_WEAKEN")
		os.Exit(ZygoteMain())
	}
	if os.Getenv("ZYGOTE_SPIKE") == "1" {
		os.Exit(zygoteSpike())
	}
	EnableSandboxHelper()
	os.Exit(m.Run())
}
