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
