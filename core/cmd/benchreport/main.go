// Command benchreport reads the output of `go test -bench` (from the files
// named on the command line, or standard input) and prints one table: each
// figure the project holds itself to, its goal, the measured value and
// whether it meets the goal. `make bench` ends with it, so a regression is
// visible at a glance. A benchmark run several times (-count) is reported
// by its median. Figures whose benchmark did not run are listed as such.
//
//	go test -run '^$' -bench . ./... | tee bench.txt
//	go run ./core/cmd/benchreport bench.txt
//
// With -base FILE (the same benchmarks run on an earlier build, as
// `make bench BENCH_BASE=v0.1.0` does) the table shows that build's median
// beside the tree's and the change between them; the verdict is the
// tree's. The machine's speed moves between days by more than most goals'
// margins: the two columns, run interleaved on one machine, are what to
// compare.
//
//	go run ./core/cmd/benchreport -base bench-base.txt -base-name v0.1.0 bench.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// figure is one line of the report: the metric a benchmark reports and
// the bound it must keep. Max true: the value must not exceed Goal; false:
// it must reach it. Info figures have no goal: they are shown, not judged.
type figure struct {
	Name   string // what the figure is, for the reader
	Bench  string // benchmark name without the -GOMAXPROCS suffix
	Metric string // the unit go test prints after the value
	Goal   float64
	Max    bool
	Info   bool
	Scale  float64 // the value is divided by it for display (ns → ms: 1e6)
	Unit   string  // the displayed unit
	// Process, when set, is the same figure at storage { durability =
	// "process" } (a write survives kill -9, not a power loss: the peers'
	// durability): the metric of processBench (both durabilities in
	// alternate rounds of one run) shown in the PROCESS column beside the
	// default's value, as information.
	Process string
	// Base, when set, names a benchmark whose median of the same metric
	// is subtracted: the figure is what Bench adds to Base (a feature on
	// against off). Only for benchmarks that ran in one process side by
	// side; not run when either did not.
	Base string
}

// figures are the goals of the performance issues, in their order
// (figures.tsv).
var figures = mustParseFigures(figuresTSV)

// processBench is the benchmark that measures the turn rows at storage {
// durability = "process" } (Process).
const processBench = "BenchmarkOutboundDurability"

// processValue is f's PROCESS column: the median of its Process metric in
// res, "—" when f has none or it did not run.
func processValue(f figure, res map[string]map[string][]float64) string {
	v := res[processBench][f.Process]
	if f.Process == "" || len(v) == 0 {
		return "—"
	}
	return num(median(v)/f.Scale, f.Unit)
}

// benchLine matches a result line: name, iterations, then value/unit
// pairs.
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parse collects every value each benchmark reported per metric.
func parse(r io.Reader) (map[string]map[string][]float64, error) {
	out := map[string]map[string][]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if out[m[1]] == nil {
				out[m[1]] = map[string][]float64{}
			}
			out[m[1]][f[i+1]] = append(out[m[1]][f[i+1]], v)
		}
	}
	return out, sc.Err()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// report writes the table and returns how many judged figures failed and
// how many were judged.
func report(w io.Writer, res map[string]map[string][]float64) (failed, judged int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FIGURE\tGOAL\tVALUE\tPROCESS\tRESULT")
	for _, f := range figures {
		vals := res[f.Bench][f.Metric]
		base := res[f.Base][f.Metric]
		if len(vals) == 0 || f.Base != "" && len(base) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Name, f.goal(), "—", processValue(f, res), "not run")
			continue
		}
		v := median(vals)
		if f.Base != "" {
			v -= median(base)
		}
		verdict := "info"
		if !f.Info {
			judged++
			verdict = "pass"
			if !meets(f, v) {
				verdict = "FAIL"
				failed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Name, f.goal(), num(v/f.Scale, f.Unit), processValue(f, res), verdict)
	}
	tw.Flush()
	return failed, judged
}

// reportBeside writes the table of figs, the tree's results res beside
// the base build's (named name), and returns how many of the tree's judged
// figures failed and how many were judged. CHANGE is the tree's median
// against the base's, in percent; "—" where either did not run. A figure
// whose benchmark function is in changed (its code differs between the
// builds, see changedBenchmarks) has its CHANGE marked with "*", and a
// note under the table says what the mark means.
func reportBeside(w io.Writer, figs []figure, base, res map[string]map[string][]float64, name string, changed map[string]bool) (failed, judged int) {
	marked := false
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "FIGURE\tGOAL\t%s\tTREE\tCHANGE\t%s PROCESS\tTREE PROCESS\tRESULT\n", strings.ToUpper(name), strings.ToUpper(name))
	for _, f := range figs {
		bv, tv := base[f.Bench][f.Metric], res[f.Bench][f.Metric]
		bs, ts, change, verdict := "—", "—", "—", "not run"
		var b, t float64
		if len(bv) > 0 {
			b = median(bv)
			bs = num(b/f.Scale, f.Unit)
		}
		if len(tv) > 0 {
			t = median(tv)
			ts = num(t/f.Scale, f.Unit)
			verdict = "info"
			if !f.Info {
				judged++
				verdict = "pass"
				if !meets(f, t) {
					verdict = "FAIL"
					failed++
				}
			}
		}
		if len(bv) > 0 && len(tv) > 0 {
			change = percent(b, t)
			if changed[f.benchFunc()] {
				change += " *"
				marked = true
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Name, f.goal(), bs, ts, change, processValue(f, base), processValue(f, res), verdict)
	}
	tw.Flush()
	if marked {
		fmt.Fprintf(w, "\n* the benchmark's own code differs between %s and the tree: the change is partly the measurement's\n", name)
	}
	return failed, judged
}

// goal is f's GOAL column: "≤ 1.00 ms", "≥ 10000 msg/s"; "—" for
// information.
func (f figure) goal() string {
	if f.Info {
		return "—"
	}
	op := "≥"
	if f.Max {
		op = "≤"
	}
	return op + " " + num(f.Goal/f.Scale, f.Unit)
}

// meets reports whether v keeps f's goal.
func meets(f figure, v float64) bool {
	if f.Max {
		return v <= f.Goal
	}
	return v >= f.Goal
}

// percent is the change from b to t: "+12%", "-3%", "0%"; "—" when b is 0
// and t is not (no ratio).
func percent(b, t float64) string {
	switch {
	case b == t:
		return "0%"
	case b == 0:
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", (t-b)/max(b, -b)*100)
}

// num formats a value with its unit and a precision that suits its size.
func num(v float64, unit string) string {
	var s string
	switch a := max(v, -v); {
	case a == 0 || a >= 100:
		s = strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		s = strconv.FormatFloat(v, 'f', 1, 64)
	default:
		s = strconv.FormatFloat(v, 'f', 2, 64)
	}
	if unit == "" {
		return s
	}
	return s + " " + unit
}

func main() {
	basePath := flag.String("base", "", "the output of the same benchmarks on an earlier build: shown beside the tree's")
	baseName := flag.String("base-name", "base", "what the earlier build is (a tag or a commit), the column's title")
	baseRev := flag.String("base-rev", "", "the earlier build's revision in this repository: figures whose benchmark's code differs from the tree's are marked")
	flag.Parse()
	res, err := parseFiles(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(2)
	}
	var failed, judged int
	if *basePath != "" {
		base, err := parseFiles([]string{*basePath})
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchreport:", err)
			os.Exit(2)
		}
		var changed map[string]bool
		if *baseRev != "" {
			if changed, err = changedBenchmarks(".", *baseRev, benchNames(figures)); err != nil {
				fmt.Fprintln(os.Stderr, "benchreport: comparing the benchmarks' code:", err)
			}
		}
		failed, judged = reportBeside(os.Stdout, figures, base, res, *baseName, changed)
	} else {
		failed, judged = report(os.Stdout, res)
	}
	fmt.Printf("\n%d of %d goals met (medians; figures not run are not counted)\n", judged-failed, judged)
}

// benchFunc is the benchmark function f is measured by: its Bench without
// a sub-benchmark's name.
func (f figure) benchFunc() string {
	fn, _, _ := strings.Cut(f.Bench, "/")
	return fn
}

// benchNames are the benchmark functions figs are measured by, each once.
func benchNames(figs []figure) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range figs {
		if fn := f.benchFunc(); !seen[fn] {
			seen[fn] = true
			names = append(names, fn)
		}
	}
	return names
}

// parseFiles parses the files named, or standard input when none is.
func parseFiles(paths []string) (map[string]map[string][]float64, error) {
	if len(paths) == 0 {
		return parse(os.Stdin)
	}
	var rs []io.Reader
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		rs = append(rs, f)
	}
	return parse(io.MultiReader(rs...))
}
