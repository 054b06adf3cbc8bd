// txtar_test.go tests that archives survive a round trip and how names and comments are read.

package txtar

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseFormat(t *testing.T) {
	tests := []struct {
		name, why, in string
		comment       string
		files         []File
	}{
		{"plain", "a comment, then two files", "why\n-- a --\nA1\nA2\n-- b.json --\n{}\n",
			"why\n", []File{{"a", []byte("A1\nA2\n")}, {"b.json", []byte("{}\n")}}},
		{"no-comment", "an archive may start with a file", "-- x --\n1\n", "", []File{{"x", []byte("1\n")}}},
		{"empty-file", "a file with no lines", "c\n-- e --\n-- f --\nF\n", "c\n", []File{{"e", nil}, {"f", []byte("F\n")}}},
		{"not-a-marker", "a line that only looks like a marker is data", "-- a --\n-- --\n--x --\n", "",
			[]File{{"a", []byte("-- --\n--x --\n")}}},
		// Found by mutation testing:
		{"empty-line", "an empty line is data, and the file after it is still found", "-- a --\n\nA\n-- b --\nB\n", "",
			[]File{{"a", []byte("\nA\n")}, {"b", []byte("B\n")}}},
		{"dash-start", "a line that starts like a marker but does not end like one is data", "-- a --\n-- note\n", "",
			[]File{{"a", []byte("-- note\n")}}},
		{"empty-name", "a marker needs a name: two spaces between the dashes is data", "-- a --\n--  --\n", "",
			[]File{{"a", []byte("--  --\n")}}},
		{"blank-name", "so is white space alone between them (from an audit: three spaces made a file named \"\")", "-- a --\n--   --\n-- \t --\n", "",
			[]File{{"a", []byte("--   --\n-- \t --\n")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			comment, files := Parse([]byte(tt.in))
			if string(comment) != tt.comment {
				t.Errorf("%s: comment %q, want %q", tt.why, comment, tt.comment)
			}
			if diff := cmp.Diff(tt.files, files); diff != "" {
				t.Errorf("%s: files (-want +got):\n%s", tt.why, diff)
			}
			if got := string(Format(comment, files)); got != tt.in {
				t.Errorf("%s: Format gives %q, want the input back %q", tt.why, got, tt.in)
			}
			for _, f := range tt.files {
				if d, ok := Get(files, f.Name); !ok || string(d) != string(f.Data) {
					t.Errorf("Get(%q) = %q, %v", f.Name, d, ok)
				}
			}
			if _, ok := Get(files, "missing"); ok {
				t.Error("Get found a file that is not there")
			}
		})
	}
}

// TestFormatEndsLines: Format ends the comment and each file with a newline
// when they lack one, so that the next marker starts a line of its own (from
// a test audit: every case of TestParseFormat already ended its lines, and a
// Format that glued "-- stderr --" to a stdout without a final newline
// passed).
func TestFormatEndsLines(t *testing.T) {
	tests := []struct {
		name, why string
		comment   string
		files     []File
		want      string
	}{
		{"comment", "a comment without a final newline gets one", "why", []File{{"a", []byte("A\n")}}, "why\n-- a --\nA\n"},
		{"file", "a file without a final newline gets one before the next marker", "", []File{{"out", []byte("x")}, {"err", []byte("y")}}, "-- out --\nx\n-- err --\ny\n"},
		{"empty", "an empty comment or file gets none", "", []File{{"e", nil}, {"f", []byte{}}}, "-- e --\n-- f --\n"},
	}
	for _, tt := range tests {
		got := string(Format([]byte(tt.comment), tt.files))
		if got != tt.want {
			t.Errorf("%s: %s: Format = %q, want %q", tt.name, tt.why, got, tt.want)
		}
		if _, files := Parse([]byte(got)); len(files) != len(tt.files) {
			t.Errorf("%s: %d files read back, want %d", tt.name, len(files), len(tt.files))
		}
	}
}
