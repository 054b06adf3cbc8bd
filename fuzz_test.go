// fuzz_test.go holds the fuzz tests of the readers: no panics, accepted inputs round-trip, the line scanner agrees with jsontext.

package tracemem

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
	"github.com/tracemem/tracemem/internal/gen"
)

// fuzzSeeds adds the shared examples, the golden inputs, a small generated
// trace, the test traces and their gzip and document forms.
func fuzzSeeds(f *testing.F) {
	add := func(b []byte) { f.Add(b) }
	paths, _ := filepath.Glob("/work/shared/examples/*.jsonl")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			add(b)
		}
	}
	golden, _ := filepath.Glob("testdata/read/*.txtar")
	for _, p := range golden {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		_, files := parseTxtar(raw)
		for _, fl := range files {
			if strings.HasPrefix(fl.Name, "input") || fl.Name == "want.json" {
				add(fl.Data)
			}
		}
	}
	var g bytes.Buffer
	if _, err := gen.Write(&g, gen.Config{Seed: 9, MemoryEvents: 60, Devices: 2, Anomalies: true, SampleEvery: 7}); err != nil {
		f.Fatal(err)
	}
	add(g.Bytes())
	full := []byte(rdFullTrace())
	add(full)
	add(rdGzip(f, full))
	var doc bytes.Buffer
	if err := rdFullDoc().WriteJSON(&doc); err != nil {
		f.Fatal(err)
	}
	add(doc.Bytes())
	add([]byte(rdLines(tMeta, memPrefix+`"bytes":-5}`)))
	add([]byte(`{"traceEvents":[]}`))
	add([]byte(""))
}

// isChromeInput reports whether ReadTrace hands data to ReadChromeTrace,
// whose documents are outside this round-trip property.
func isChromeInput(data []byte) bool {
	src, closeSrc, _, err := decompress(bytes.NewReader(data))
	if err != nil {
		return false
	}
	defer closeSrc()
	format, _, err := detect(src)
	return err == nil && format == formatChrome
}

// FuzzReadTrace: ReadTrace never panics; an error names where (a
// *ParseError that starts with its line or offset; only an empty input and
// gzip's own header errors have no place); an accepted candle-graph input
// written with WriteJSONL (and WriteJSON) reads back to an equal document.
func FuzzReadTrace(f *testing.F) {
	fuzzSeeds(f)
	where := regexp.MustCompile(`^(line|offset) \d+: `)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ReadTrace(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			switch {
			case errors.As(err, &pe):
				if !where.MatchString(err.Error()) {
					t.Fatalf("error %q names no line or offset", err)
				}
				checkLineOffset(t, data, pe)
			case err == ErrEmptyTrace, strings.HasPrefix(err.Error(), "gzip: "):
			default:
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if !utf8.ValidString(err.Error()) {
				t.Fatalf("error text is not valid UTF-8: %q", err)
			}
			return
		}
		if isChromeInput(data) {
			return
		}
		var buf bytes.Buffer
		if err := doc.WriteJSONL(&buf); err != nil {
			t.Fatalf("WriteJSONL of an accepted document: %v", err)
		}
		jsonl := buf.String()
		back, err := ReadTrace(&buf)
		if err != nil {
			t.Fatalf("reading WriteJSONL output: %v\n%s", err, jsonl)
		}
		if diff := cmp.Diff(doc, back); diff != "" {
			t.Fatalf("JSONL round trip (-first read +second read):\n%s\n%s", diff, jsonl)
		}
		buf.Reset()
		if err := doc.WriteJSON(&buf); err != nil {
			t.Fatalf("WriteJSON of an accepted document: %v", err)
		}
		back, err = ReadTrace(&buf)
		if err != nil {
			t.Fatalf("reading WriteJSON output: %v", err)
		}
		if diff := cmp.Diff(doc, back); diff != "" {
			t.Fatalf("document round trip (-first read +second read):\n%s", diff)
		}
	})
}

// scanReference splits a line with jsontext (the reference): whether it is
// one valid JSON value (duplicate names allowed, as the scanner leaves them
// to the record parsers), and for an object its member names and raw values.
func scanReference(line []byte) (valid bool, names []string, vals []string) {
	if !jsontext.Value(line).IsValid(jsontext.AllowDuplicateNames(true)) {
		return false, nil, nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(line), jsontext.AllowDuplicateNames(true))
	if dec.PeekKind() != '{' {
		return true, nil, nil
	}
	dec.ReadToken()
	for dec.PeekKind() != '}' {
		name, _ := dec.ReadToken()
		names = append(names, name.String()) // before the next read invalidates the token
		v, _ := dec.ReadValue()
		vals = append(vals, string(bytes.TrimSpace(v)))
	}
	return true, names, vals
}

// scanFast runs the lineScanner the way parseLine does.
func scanFast(line []byte) (valid bool, names []string, vals []string) {
	s := &lineScanner{b: line}
	i := skipSpace(line, 0)
	if i == len(line) {
		return false, nil, nil
	}
	var ms []member
	var end int
	if line[i] == '{' {
		end = s.object(i, 1, &ms)
	} else {
		end = s.value(i, 0)
	}
	if end < 0 || skipSpace(line, end) != len(line) {
		return false, nil, nil
	}
	for _, m := range ms {
		names = append(names, string(m.name(line, s.alts)))
		vals = append(vals, string(m.val(line)))
	}
	return true, names, vals
}

// FuzzLineScanner: the one-pass scanner accepts exactly the lines jsontext
// accepts and splits objects into the same members.
func FuzzLineScanner(f *testing.F) {
	for _, s := range []string{tMeta, tMem, tOp, `{"a":"\u00e9\"","b":[1,-0.5e+3,{"c":null}],"":true}`, `[1,2]`, `"x"`,
		`{"a":1,}`, `{"a":01}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{"a":tru}`, `{"a":1.}`, ` {"a" : [ ] } `, `{}`, `-`, `{"a":"\x01"}`,
		`1e`, `1e+`, `1.`, `-0`, `{"a":1e}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if bytes.IndexByte(line, '\n') >= 0 {
			return // the scanner sees one line at a time
		}
		rv, rn, rvals := scanReference(line)
		fv, fn, fvals := scanFast(line)
		if rv != fv {
			t.Fatalf("%q: jsontext valid %v, scanner valid %v", line, rv, fv)
		}
		if diff := cmp.Diff(rn, fn); diff != "" {
			t.Fatalf("%q: names (-jsontext +scanner):\n%s", line, diff)
		}
		if diff := cmp.Diff(rvals, fvals); diff != "" {
			t.Fatalf("%q: values (-jsontext +scanner):\n%s", line, diff)
		}
	})
}

// TestReadTraceNoPanicTruncations reads every prefix of a trace (plain and
// gzip) and checks that it errors or succeeds without panicking, and that a
// JSONL prefix cut at a line end reads.
func TestReadTraceNoPanicTruncations(t *testing.T) {
	full := []byte(rdFullTrace())
	for n := 0; n <= len(full); n++ {
		_, err := ReadTrace(bytes.NewReader(full[:n]))
		if n > len(tMeta) && full[n-1] == '\n' && err != nil {
			t.Errorf("prefix of %d bytes (whole lines): %v", n, err)
		}
	}
	z := rdGzip(t, full)
	for n := range z {
		if _, err := ReadTrace(bytes.NewReader(z[:n])); err == nil && n < len(z)-8 {
			t.Errorf("gzip prefix of %d of %d bytes read without error", n, len(z))
		}
	}
}

// checkLineOffset fails t when a JSONL error's offset (pe.Line > 0) lies
// outside its line of data, or disagrees with a column in its message.
// Gzip input is skipped: its lines are not data's.
func checkLineOffset(t *testing.T, data []byte, pe *ParseError) {
	t.Helper()
	if pe.Line == 0 || bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		return
	}
	lines := bytes.Split(data, []byte("\n"))
	if pe.Offset < 0 || pe.Line <= len(lines) && pe.Offset > int64(len(lines[pe.Line-1])) {
		t.Fatalf("error %q: offset %d outside line %d", pe, pe.Offset, pe.Line)
	}
	if _, col, ok := strings.Cut(pe.Msg, " column "); ok {
		if n, _, _ := strings.Cut(col, ":"); n != strconv.FormatInt(pe.Offset+1, 10) {
			t.Fatalf("error %q: column %s, offset %d", pe, n, pe.Offset)
		}
	}
}
