// golden_test.go runs the golden cases of the memory rules: testdata/examples/*.txtar and testdata/memory/*.txtar.

package tracemem

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the want files of golden tests from what the code produces")

// goldenView is what a golden case checks of an analysis: the shape of the
// worked examples in shared/examples.
type goldenView struct {
	Summary   map[string]any         `json:"summary"`
	Timeline  []map[string]any       `json:"timeline"`
	Breakdown []string               `json:"peak_breakdown_tensor_ids"`
	ByDevice  []DeviceMemoryStats    `json:"by_device"`
	Anomalies Anomalies              `json:"anomalies"`
	Nodes     map[string]NodeMetrics `json:"nodes"`
}

// viewOf renders a profile and node metrics as a golden view. Categories
// are listed when non-zero, as the examples list them; with zeros, a
// timeline point and peak_by_category list every category they hold, those
// at 0 included (the library lists none at 0 in peak_by_category, which a
// case then shows).
func viewOf(t *testing.T, p *MemoryProfile, nodes map[string]NodeMetrics, zeros bool) []byte {
	t.Helper()
	nonZero := func(c CategoryBytes) map[string]uint64 {
		m := map[string]uint64{}
		for cat, v := range c.All() {
			if v > 0 {
				m[cat.String()] = v
			}
		}
		return m
	}
	byCategory := nonZero
	if zeros {
		byCategory = func(c CategoryBytes) map[string]uint64 {
			m := map[string]uint64{}
			for cat, v := range c.All() {
				m[cat.String()] = v
			}
			return m
		}
	}
	v := goldenView{
		Summary: map[string]any{
			"alloc_count":             p.Summary.AllocCount,
			"free_count":              p.Summary.FreeCount,
			"total_alloc_bytes":       p.Summary.TotalAllocBytes,
			"peak_bytes":              p.Summary.PeakBytes,
			"peak_timestamp_ns":       p.Summary.PeakTimestampNs,
			"peak_device":             p.Summary.PeakDevice,
			"peak_by_category":        byCategory(p.Summary.PeakByCategory),
			"autograd_retained_bytes": p.Summary.AutogradRetainedBytes,
			"preexisting_bytes":       p.Summary.PreexistingBytes,
		},
		Timeline:  []map[string]any{},
		Breakdown: []string{},
		ByDevice:  p.ByDevice,
		Anomalies: p.Anomalies,
		Nodes:     nodes,
	}
	for _, pt := range p.Timeline {
		v.Timeline = append(v.Timeline, map[string]any{
			"timestamp_ns": pt.TimestampNs,
			"device":       pt.Device,
			"live_bytes":   pt.LiveBytes,
			"free_bytes":   pt.FreeBytes,
			"by_category":  byCategory(pt.ByCategory),
		})
	}
	for _, a := range p.PeakBreakdown {
		v.Breakdown = append(v.Breakdown, a.TensorID)
	}
	// Through a map, so that keys come sorted, as in the files.
	out, err := json.Marshal(v)
	var m map[string]any
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // exact, however big
		err = dec.Decode(&m)
	}
	if err == nil {
		out, err = json.MarshalIndent(m, "", " ")
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGoldenMemory(t *testing.T) {
	files, _ := filepath.Glob("testdata/examples/*.txtar")
	more, _ := filepath.Glob("testdata/memory/*.txtar")
	files = append(files, more...)
	if len(files) < 8 {
		t.Fatalf("found %d golden cases, want the 8 worked examples at least", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, archive := parseTxtar(data)
			trace, ok := txtarGet(archive, "trace.jsonl")
			if !ok {
				t.Fatal("no trace.jsonl in the archive")
			}
			var opts Options
			if o, ok := txtarGet(archive, "options.json"); ok {
				if err := json.Unmarshal(o, &opts); err != nil {
					t.Fatalf("options.json: %v", err)
				}
			}
			doc, err := ReadTrace(bytes.NewReader(trace))
			if err != nil {
				t.Fatalf("ReadTrace: %v", err)
			}
			p, err := Analyze(doc, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, doc, p)
			// The cases of testdata/memory show categories kept at 0 (rule 7).
			got := viewOf(t, p, NodeMemoryMetrics(doc, nil), strings.HasPrefix(file, filepath.Join("testdata", "memory")))

			// The streaming path must say the same, or fail as the case says.
			sp, snodes, err := AnalyzeStream(bytes.NewReader(trace), opts)
			if re, ok := txtarGet(archive, "stream-error"); ok {
				if err == nil || !regexp.MustCompile(strings.TrimSpace(string(re))).MatchString(err.Error()) {
					t.Errorf("AnalyzeStream error = %v, want one matching %q", err, re)
				}
			} else if err != nil {
				t.Fatalf("AnalyzeStream: %v", err)
			} else {
				if diff := cmp.Diff(p, sp); diff != "" {
					t.Errorf("AnalyzeStream profile differs from Analyze (-Analyze +AnalyzeStream):\n%s", diff)
				}
				if diff := cmp.Diff(NodeMemoryMetrics(doc, nil), snodes); diff != "" {
					t.Errorf("AnalyzeStream nodes differ from NodeMemoryMetrics (-doc +stream):\n%s", diff)
				}
			}

			// The worked examples' answers are given (../shared/examples), not
			// made by this code: -update leaves them, and a difference fails.
			given := strings.HasPrefix(file, filepath.Join("testdata", "examples"))
			if *update && !given {
				i := slices.IndexFunc(archive, func(f txtarFile) bool { return f.Name == "want.json" })
				if i < 0 { // a new case
					archive = append(archive, txtarFile{Name: "want.json"})
					i = len(archive) - 1
				}
				archive[i].Data = append(got, '\n')
				if err := os.WriteFile(file, formatTxtar(comment, archive), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantData, ok := txtarGet(archive, "want.json")
			if !ok {
				t.Fatal("no want.json in the archive")
			}
			var want, have any
			if err := json.Unmarshal(wantData, &want); err != nil {
				t.Fatalf("want.json: %v", err)
			}
			if err := json.Unmarshal(got, &have); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("%s\n(-want +got):\n%s", bytes.TrimSpace(comment), diff)
			}
		})
	}
}
