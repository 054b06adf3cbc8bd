// main_test.go holds the in-process runner of the command, the golden-output tests and the committed sample trace.

package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracemem/tracemem/internal/gen"
	"github.com/tracemem/tracemem/internal/txtar"
)

var update = flag.Bool("update", false, "rewrite testdata/*.txtar and the repository's testdata/sample.jsonl")

// samplePath is the committed sample trace, relative to this package.
const samplePath = "../../testdata/sample.jsonl"

// sampleConfig makes the committed sample: a training run on two devices
// with a few thousand memory events and one anomaly of each kind.
var sampleConfig = gen.Config{Seed: 7, MemoryEvents: 3000, Devices: 2, Anomalies: true}

var sampleOnce sync.Once

// sample returns the path of the sample trace, regenerating it first with
// -update.
func sample(t testing.TB) string {
	t.Helper()
	sampleOnce.Do(func() {
		if !*update {
			return
		}
		var b bytes.Buffer
		if _, err := gen.Write(&b, sampleConfig); err != nil {
			t.Fatalf("gen.Write: %v", err)
		}
		if err := os.WriteFile(samplePath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	return samplePath
}

// TestSampleIsGenerated checks that the committed sample is what
// sampleConfig generates, so that it can be regenerated at will.
func TestSampleIsGenerated(t *testing.T) {
	path := sample(t)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	st, err := gen.Write(&want, sampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%s differs from gen.Write(%+v) (%d bytes vs %d): regenerate it and the goldens with go test ./cmd/tracemem -update, and read the diff",
			path, sampleConfig, len(got), want.Len())
	}
	if st.Memory < 1000 || st.Memory > 10000 || st.SpanStarts == 0 {
		t.Errorf("sample has %d memory records and %d spans; want a few thousand events with spans", st.Memory, st.SpanStarts)
	}
}

// result is what one run of the command did.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs the command in-process.
func runCmd(t testing.TB, stdin io.Reader, args ...string) result {
	t.Helper()
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var out, errb bytes.Buffer
	code := run(args, stdin, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestGolden runs the command on the cases of testdata/*.txtar and compares
// its exit status, stdout and stderr with the archive. An archive's comment
// has a "reason:" line, an "args:" line (split at spaces; SAMPLE is the
// committed sample, TRACE the archive's trace.jsonl written to a temporary
// file and named "TRACE" in the output) and an "exit:" line.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			raw, archive := txtar.Parse(data)
			comment := string(raw)
			header := parseHeader(t, comment)
			if header["reason"] == "" {
				t.Errorf("%s: no reason: line", file)
			}
			wantCode, err := strconv.Atoi(header["exit"])
			if err != nil {
				t.Fatalf("%s: exit: %v", file, err)
			}
			tracePath := ""
			if tr, ok := txtar.Get(archive, "trace.jsonl"); ok {
				tracePath = filepath.Join(t.TempDir(), "trace.jsonl")
				if err := os.WriteFile(tracePath, tr, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var args []string
			for a := range strings.FieldsSeq(header["args"]) {
				switch a {
				case "SAMPLE":
					a = sample(t)
				case "TRACE":
					a = tracePath
				}
				args = append(args, a)
			}
			r := runCmd(t, nil, args...)
			if tracePath != "" {
				r.stdout = strings.ReplaceAll(r.stdout, tracePath, "TRACE")
				r.stderr = strings.ReplaceAll(r.stderr, tracePath, "TRACE")
			}
			if *update {
				out := []txtar.File{}
				for _, f := range archive {
					if f.Name != "stdout" && f.Name != "stderr" {
						out = append(out, f)
					}
				}
				out = append(out, txtar.File{Name: "stdout", Data: []byte(r.stdout)}, txtar.File{Name: "stderr", Data: []byte(r.stderr)})
				comment = regexp.MustCompile(`(?m)^exit: .*$`).ReplaceAllString(comment, "exit: "+strconv.Itoa(r.code))
				if err := os.WriteFile(file, txtar.Format([]byte(comment), out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantOut, _ := txtar.Get(archive, "stdout")
			wantErr, _ := txtar.Get(archive, "stderr")
			if r.code != wantCode {
				t.Errorf("exit status %d, want %d (stderr %q)", r.code, wantCode, r.stderr)
			}
			if r.stdout != string(wantOut) {
				t.Errorf("stdout differs from %s (rerun with -update and read the diff):\n%s", file, lineDiff(string(wantOut), r.stdout))
			}
			if r.stderr != string(wantErr) {
				t.Errorf("stderr = %q, want %q", r.stderr, wantErr)
			}
		})
	}
}

// parseHeader reads the "key: value" lines of a golden file's comment.
func parseHeader(t *testing.T, comment string) map[string]string {
	h := make(map[string]string)
	for line := range strings.SplitSeq(comment, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			h[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return h
}

// lineDiff shows the first differing line of two texts.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + wl + "\n  got:  " + gl
		}
	}
	return "(no line differs)"
}

// TestDeviceNamedEmpty: a device may be named "" (the reader accepts it);
// its trace has memory events, and a peak on it is a peak, shown as "-",
// not "none (no memory events)".
func TestDeviceNamedEmpty(t *testing.T) {
	trace := `{"kind":"meta","schema":"candle-graph/trace/6","run_id":"r","correlation_id":"c","entrypoint":"e","phase":"train","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"","timing_mode":"host","tags":{}}
{"kind":"memory","timestamp_ns":5,"tensor_id":"a","span_id":"","device":"","bytes":4096,"action":"alloc","shape":[1024],"dtype":"f32","category":"activation"}
`
	path := writeFile(t, t.TempDir(), "trace.jsonl", []byte(trace))
	got := runCmd(t, nil, "summary", path)
	if got.code != 0 || strings.Contains(got.stdout, "no memory events") || !strings.Contains(got.stdout, "Peak: 4.00 KiB (4096 bytes) on - at") ||
		!strings.Contains(got.stdout, "of 1 live on -") || !regexp.MustCompile(`(?m)^  -\s+unknown\s+4\.00 KiB\s`).MatchString(got.stdout) {
		t.Errorf("summary: exit %d, stderr %q, stdout:\n%s\nwant the peak of 4096 bytes on -, and its allocation", got.code, got.stderr, got.stdout)
	}
	out := filepath.Join(t.TempDir(), "r.html")
	if got := runCmd(t, nil, "report", "-o", out, path); got.code != 0 {
		t.Fatalf("report: exit %d: %s", got.code, got.stderr)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(html), "no memory events") || !strings.Contains(string(html), "4096 bytes) on - at") {
		t.Errorf("report: no peak on the device named \"\"")
	}
	if !strings.Contains(string(html), "<tr><td>-</td>") { // from a mutation test: the devices tables were not checked
		t.Errorf("report: the device named \"\" has no row named - in the devices table")
	}
}
