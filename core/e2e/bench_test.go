package e2e

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clawhost/clawhost/sdk/sdktest"
)

// BenchmarkStartup measures exec of clawhost until all 3 example plugins
// (loopback, ping, clock-hook) are ready, and reports the idle RSS of the
// host and of one plugin after the last start.
func BenchmarkStartup(b *testing.B) {
	dir := b.TempDir()
	cfg := writeConfig(b, dir, true)
	bin := filepath.Join(binDir(b), "clawhost")
	var lat []time.Duration
	var hostRSS, pluginRSS float64
	for i := 0; i < b.N; i++ {
		log := &sdktest.Log{}
		cmd := exec.Command(bin, "-config", cfg)
		cmd.Stderr = log
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		for strings.Count(log.String(), "state=ready") < 3 {
			if time.Since(t0) > 20*time.Second {
				b.Fatalf("plugins not ready:\n%s", log.String())
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(t0))
		if i == b.N-1 {
			time.Sleep(2 * time.Second)
			hostRSS = rssMB(cmd.Process.Pid)
			for _, c := range children(cmd.Process.Pid) {
				if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", c)); strings.HasSuffix(exe, "clawhost-loopback") {
					pluginRSS = rssMB(c)
				}
			}
		}
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ready-ms")
	b.ReportMetric(hostRSS, "host-rss-MB")
	b.ReportMetric(pluginRSS, "plugin-rss-MB")
}

func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkValidateManyPlugins runs `clawhost validate` in-process on a file
// with n plugin blocks whose binaries are missing (each gets a "did you
// mean" over the sources in plugin_dir): the time per plugin must stay flat
// from 1,000 to 4,000 — it grew with n when each diagnostic was formatted
// by rescanning the whole file.
func BenchmarkValidateManyPlugins(b *testing.B) {
	for _, n := range []int{1000, 4000} {
		b.Run(fmt.Sprintf("plugins=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			bin := filepath.Join(dir, "bin")
			if err := os.Mkdir(bin, 0o755); err != nil {
				b.Fatal(err)
			}
			for _, s := range []string{"telegram", "webchat", "loopback", "ping", "clock-hook"} {
				sdktest.WriteExecutable(b, filepath.Join(bin, "clawhost-"+s), nil, 0o755)
			}
			var src strings.Builder
			fmt.Fprintf(&src, "plugin_dir = %q\n", bin)
			for i := range n {
				fmt.Fprintf(&src, "plugin \"p%d\" {\n  source = \"telegrm%d\"\n  config {\n    token = \"x\"\n  }\n}\n", i, i%10)
			}
			path := filepath.Join(dir, "many.hcl")
			if err := os.WriteFile(path, []byte(src.String()), 0o600); err != nil {
				b.Fatal(err)
			}
			var errb bytes.Buffer
			b.ResetTimer()
			for b.Loop() {
				errb.Reset()
				if code := run([]string{"validate", "-config", path}, io.Discard, &errb); code != 1 {
					b.Fatalf("exit %d, want 1", code)
				}
			}
			b.StopTimer()
			if got := strings.Count(errb.String(), "Plugin binary not found"); got != n {
				b.Fatalf("%d missing-binary diagnostics, want %d", got, n)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n)/1000, "µs/plugin")
		})
	}
}
