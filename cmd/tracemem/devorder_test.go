// devorder_test.go holds the tests of the order devices are shown in.

package main

import (
	"cmp"
	"math/big"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// refNaturalCompare is naturalCompare, obviously: split into runs of
// digits and runs of other bytes, digits compared as numbers of any size.
func refNaturalCompare(a, b string) int {
	split := regexp.MustCompile(`[0-9]+|[^0-9]`)
	x, y := split.FindAllString(a, -1), split.FindAllString(b, -1)
	for i := 0; i < len(x) && i < len(y); i++ {
		nx, okx := new(big.Int).SetString(x[i], 10)
		ny, oky := new(big.Int).SetString(y[i], 10)
		switch {
		case okx && oky:
			if c := nx.Cmp(ny); c != 0 {
				return c
			}
		case x[i] != y[i]:
			return strings.Compare(x[i], y[i])
		}
	}
	return cmp.Or(cmp.Compare(len(x), len(y)), strings.Compare(a, b))
}

// TestNaturalCompare: device names order by their numbers' values (from a
// user trial: cuda:10 came before cuda:2), checked against the reference on
// random names and on cases with a reason each.
func TestNaturalCompare(t *testing.T) {
	for _, c := range []struct {
		a, b   string
		want   int
		reason string
	}{
		{"cuda:2", "cuda:10", -1, "2 before 10"},
		{"cuda:10", "cuda:9", 1, "10 after 9"},
		{"cuda:1", "cuda:1", 0, "equal"},
		{"cuda:01", "cuda:1", -1, "equal values: byte order decides"},
		{"cpu", "cuda:0", -1, "letters as bytes"},
		{"cuda", "cuda:0", -1, "a prefix first"},
		{"a99999999999999999999999", "a100000000000000000000000", -1, "numbers beyond uint64"},
		{"x1y2", "x1y10", -1, "every run of digits"},
		{"", "0", -1, "empty first"},
	} {
		if got := naturalCompare(c.a, c.b); got != c.want || -naturalCompare(c.b, c.a) != c.want {
			t.Errorf("%s: naturalCompare(%q, %q) = %d, want %d", c.reason, c.a, c.b, got, c.want)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	name := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteByte("0019az:"[rng.IntN(7)])
		}
		return b.String()
	}
	for range 100_000 {
		a, b := name(), name()
		if got, want := naturalCompare(a, b), refNaturalCompare(a, b); got != want {
			t.Fatalf("naturalCompare(%q, %q) = %d, want %d", a, b, got, want)
		}
	}
}

// TestDeviceOrder: summary, report and the Chrome export list devices in
// natural order; the profile keeps the library's byte order.
func TestDeviceOrder(t *testing.T) {
	var recs []string
	for _, d := range []string{"cuda:10", "cuda:2", "cuda:1"} {
		recs = append(recs, memRec(10, "alloc", "t"+d, "root", d, 100, "activation"))
	}
	path := writeFile(t, t.TempDir(), "trace.jsonl", []byte(rootTrace(recs...)))
	want := []string{"cuda:1", "cuda:2", "cuda:10"}
	order := func(out string, re string) []string {
		var got []string
		for _, m := range regexp.MustCompile(re).FindAllStringSubmatch(out, -1) {
			got = append(got, m[1])
		}
		return got
	}
	summary := runCmd(t, nil, "summary", path).stdout
	_, devices, _ := strings.Cut(summary, "\nDevices\n")
	devices, _, _ = strings.Cut(devices, "\n\n")
	_, report := writeReportFile(t, path)
	chrome := runCmd(t, nil, "export", "--format", "chrome", "-o", "-", path).stdout
	profile := runCmd(t, nil, "profile", path).stdout
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		{"summary", order(devices, `(?m)^  (cuda:\d+) `), want},
		{"report charts", order(string(report), `data-device="(cuda:\d+)"`), want},
		{"report devices table", order(string(report), `<tr><td>(cuda:\d+)</td>`), want}, // from a mutation test: only the charts were checked
		{"chrome processes", order(chrome, `"name":"memory (cuda:\d+)"`), want},
		{"profile", order(profile, `"device": "(cuda:\d+)",\s+"capacity_bytes"`), []string{"cuda:1", "cuda:10", "cuda:2"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: devices %q, want %q", c.name, c.got, c.want)
		}
	}
}
