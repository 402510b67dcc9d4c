package main

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// figuresTSV is the table of figures, one a line (its header says how it
// is written).
//
//go:embed figures.tsv
var figuresTSV string

// parseFigures reads the table of figures: tab-separated NAME, BENCHMARK,
// METRIC, GOAL ("max N", "min N" or "info"), SCALE, UNIT, PROCESS and
// BASE, "-" for an empty UNIT, PROCESS or BASE; "#" lines and blank lines
// are comments.
func parseFigures(tsv string) ([]figure, error) {
	var out []figure
	for i, line := range strings.Split(tsv, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := parseFigure(line)
		if err != nil {
			return nil, fmt.Errorf("figures.tsv:%d: %w", i+1, err)
		}
		out = append(out, f)
	}
	return out, nil
}

// parseFigure reads one line of the table.
func parseFigure(line string) (figure, error) {
	c := strings.Split(line, "\t")
	if len(c) != 8 {
		return figure{}, fmt.Errorf("%d columns, want 8 (NAME BENCHMARK METRIC GOAL SCALE UNIT PROCESS BASE)", len(c))
	}
	opt := func(s string) string {
		if s == "-" {
			return ""
		}
		return s
	}
	f := figure{Name: c[0], Bench: c[1], Metric: c[2], Unit: opt(c[5]), Process: opt(c[6]), Base: opt(c[7])}
	if f.Name == "" || f.Bench == "" || f.Metric == "" {
		return figure{}, fmt.Errorf("empty NAME, BENCHMARK or METRIC")
	}
	var err error
	if f.Scale, err = strconv.ParseFloat(c[4], 64); err != nil || f.Scale == 0 {
		return figure{}, fmt.Errorf("SCALE %q is not a number other than 0", c[4])
	}
	switch op, n, _ := strings.Cut(c[3], " "); op {
	case "info":
		f.Info = n == ""
	case "max", "min":
		f.Max = op == "max"
		f.Goal, err = strconv.ParseFloat(n, 64)
		if err != nil {
			return figure{}, fmt.Errorf("GOAL %q: %w", c[3], err)
		}
		return f, nil
	}
	if !f.Info {
		return figure{}, fmt.Errorf("GOAL %q is not \"max N\", \"min N\" or \"info\"", c[3])
	}
	return f, nil
}

// mustParseFigures is parseFigures for the embedded table, which
// TestFiguresTable checks.
func mustParseFigures(tsv string) []figure {
	f, err := parseFigures(tsv)
	if err != nil {
		panic(err)
	}
	return f
}
