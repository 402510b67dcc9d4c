package sandbox

import (
	"os"
	"strings"
	"testing"

	"github.com/clawhost/clawhost/core/sandbox/helper"
)

// TestMain makes the test binary the sandbox helper (run with helper.Arg, its defences
// weakened as ZYGOTE_WEAKEN says: helper.Testing.Weaken; ZYGOTE_GRANTS, paths joined by
// ":", are helper.Testing.Grants) and BenchmarkSandboxZygote's
// (ZYGOTE_SPIKE=1), as clawhost's binary is the helper.
func TestMain(m *testing.M) {
	if len(os.Args) >= 2 && os.Args[1] == helper.Arg {
		helper.Testing.Weaken = os.Getenv("ZYGOTE_WEAKEN")
		if g := os.Getenv("ZYGOTE_GRANTS"); g != "" {
			helper.Testing.Grants = strings.Split(g, ":")
		}
		os.Exit(helper.Main())
	}
	if os.Getenv("ZYGOTE_SPIKE") == "1" {
		os.Exit(zygoteSpike())
	}
	EnableSandboxHelper()
	os.Exit(m.Run())
}
