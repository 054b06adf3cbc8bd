// errors_test.go holds the exit status and message tests for bad input and bad command lines.

package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writeFile writes data to the file name in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBadInput checks that every kind of bad input exits 1 with one line on
// stderr naming the file and where, and never a stack trace.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string { return writeFile(t, dir, name, data) }
	sampleData, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(sampleData), "\n")
	malformed := strings.Join(lines[:5], "") + "{\"kind\": \"memory\", \"timestamp_ns\": \n" + strings.Join(lines[5:20], "")
	badAction := strings.Join(lines[:5], "") +
		`{"kind": "memory", "timestamp_ns": 1, "tensor_id": "x", "span_id": "", "device": "cuda:0", "bytes": 4, "action": "alocate", "shape": [1], "dtype": "f32"}` + "\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(sampleData)
	zw.Close()
	truncatedGz := gz.Bytes()[:gz.Len()/2]
	var gz2 bytes.Buffer
	zw = gzip.NewWriter(&gz2)
	zw.Write(gz.Bytes())
	zw.Close()

	missing := filepath.Join(dir, "nosuch.jsonl")
	cases := []struct {
		name   string
		args   []string // FILE is replaced by file
		file   string
		stdin  string
		wantRe string
		reason string
	}{
		{"missing file", []string{"summary", "FILE"}, missing, "", `^tracemem: .*nosuch\.jsonl: no such file or directory\n$`, "a missing file is named with the OS's reason"},
		{"missing file, newline in name", []string{"summary", "FILE"}, filepath.Join(dir, "no\nsuch.jsonl"), "", `^tracemem: .*/no\\nsuch\.jsonl: no such file or directory\n$`, "the error stays on one line, whatever the file's name: the newline is escaped, as the text outputs escape names"},
		{"missing file, escape in name", []string{"summary", "FILE"}, filepath.Join(dir, "no\x1b[31m\xffsuch.jsonl"), "", `^tracemem: .*no\\x1b\[31m\\xffsuch\.jsonl: no such file or directory\n$`, "a control character or an invalid byte of a name in the system's error text is escaped, so it cannot drive the terminal"},
		{"missing file, escape in name, several files", []string{"summary", sample(t), "FILE"}, filepath.Join(dir, "no\x1b[31msuch.jsonl"), "", `^tracemem: .*no\\x1b\[31msuch\.jsonl: no such file or directory\n$`, "likewise for one file of several"},
		{"missing file, spaces in name", []string{"summary", "FILE"}, filepath.Join(dir, "two  spaces\tand a tab.jsonl"), "", `^tracemem: .*/two  spaces\\tand a tab\.jsonl: no such file or directory\n$`, "spaces are kept as they are and a tab is escaped: white space squashed to one space named another file (from a review)"},
		{"missing file, newline in name, nodes", []string{"nodes", "FILE"}, filepath.Join(dir, "no\nsuch.jsonl"), "", `^tracemem: .*/no\\nsuch\.jsonl: no such file or directory\n$`, "likewise in every command"},
		{"directory", []string{"profile", "FILE"}, dir, "", `^tracemem: .*: is a directory, not a trace file\n$`, "a directory is not read as a trace"},
		{"malformed JSONL", []string{"summary", "FILE"}, write("malformed.jsonl", []byte(malformed)), "", `^tracemem: .*malformed\.jsonl: line 6: .+\n$`, "a record that is not JSON is named by its line"},
		{"bad enum", []string{"nodes", "FILE"}, write("badaction.jsonl", []byte(badAction)), "", `^tracemem: .*badaction\.jsonl: line 6: memory: .*alocate.*\n$`, "a bad field value names line, record kind and value"},
		{"not a trace", []string{"summary", "FILE"}, write("notes.txt", []byte("hello, this is not a trace\n")), "", `^tracemem: .*notes\.txt: .+\n$`, "plain text is refused with the file named"},
		{"png", []string{"report", "-o", filepath.Join(dir, "r.html"), "FILE"}, write("img.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")), "", `^tracemem: .*img\.png: .+\n$`, "binary data is refused with the file named"},
		{"empty file", []string{"summary", "FILE"}, write("empty.jsonl", nil), "", `^tracemem: .*empty\.jsonl: .*empty.*\n$`, "an empty file says it is empty"},
		{"truncated gzip", []string{"summary", "FILE"}, write("cut.jsonl.gz", truncatedGz), "", `^tracemem: .*cut\.jsonl\.gz: line \d+: .*gzip: unexpected EOF\n$`, "a cut gzip stream is an error, not a partial summary, and says gzip"},
		{"truncated gzip, profile", []string{"profile", "FILE"}, write("cut2.jsonl.gz", truncatedGz), "", `^tracemem: .*cut2\.jsonl\.gz: line \d+: .*gzip: unexpected EOF\n$`, "the same through the stream without the span tap"},
		{"gzip with a tail", []string{"summary", "FILE"}, write("tail.jsonl.gz", append(append([]byte{}, gz.Bytes()...), "not a gzip member"...)), "", `^tracemem: .*tail\.jsonl\.gz: .*gzip: invalid header: bytes after the last member that are not a gzip member\n$`, "bytes after the last gzip member that are not one are a gzip error (zero bytes are padding: TestSameOutputWhateverTheInput)"},
		{"gzip padding with a tail", []string{"summary", "FILE"}, write("padtail.jsonl.gz", append(append([]byte{}, gz.Bytes()...), 0, 0, 0, 0, 'x')), "", `^tracemem: .*padtail\.jsonl\.gz: .*gzip: invalid header: bytes other than zero after the padding that ends the last member\n$`, "zero bytes are padding only up to the end of the input"},
		{"corrupt gzip header", []string{"summary", "FILE"}, write("bad.gz", []byte{0x1f, 0x8b, 0, 0, 1, 2}), "", `^tracemem: .*bad\.gz: .*\n$`, "a corrupt gzip header is an error"},
		{"gzip twice", []string{"summary", "FILE"}, write("twice.jsonl.gz", gz2.Bytes()), "", `^tracemem: .*twice\.jsonl\.gz: gzip: the data inside is gzip again \(the trace was compressed twice\); decompress it once, and read what that gives\n$`, "gzip inside gzip is named (from a user trial)"},
		{"gzip twice, stdin", []string{"summary", "-"}, "", gz2.String(), `^tracemem: <stdin>: gzip: the data inside is gzip again`, "likewise from a pipe, which the command decompresses before the library would again (from a user trial: a pipe read it, a file did not)"},
		{"bad stdin", []string{"profile", "-"}, "", "{\"kind\": \"meta\"\n", `^tracemem: <stdin>: .+\n$`, "standard input is named <stdin>"},
		{"export missing file", []string{"export", "--format", "pprof", "-o", filepath.Join(dir, "x.pb.gz"), "FILE"}, missing, "", `^tracemem: .*nosuch\.jsonl: no such file or directory\n$`, "export reports a missing input the same way"},
		{"unwritable output", []string{"export", "--format", "csv", "-o", filepath.Join(dir, "no/such/dir/x.csv"), sample(t)}, "", "", `^tracemem: .*x\.csv: no such file or directory\n$`, "an output that cannot be created is named"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "FILE", c.file)
			}
			r := runCmd(t, strings.NewReader(c.stdin), args...)
			if r.code != 1 {
				t.Errorf("%s: exit status %d, want 1 (stderr %q)", c.reason, r.code, r.stderr)
			}
			if !regexp.MustCompile(c.wantRe).MatchString(r.stderr) {
				t.Errorf("%s: stderr %q does not match %s", c.reason, r.stderr, c.wantRe)
			}
			if strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
				t.Errorf("%s: stderr is not one clean line: %q", c.reason, r.stderr)
			}
		})
	}
}

// TestSummarySomeFilesFail checks that a failing file among several is
// reported, the others summarized, and the exit status is 1.
func TestSummarySomeFilesFail(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "rank1.jsonl")
	r := runCmd(t, nil, "summary", sample(t), missing)
	if r.code != 1 {
		t.Errorf("exit status %d, want 1", r.code)
	}
	if !strings.Contains(r.stderr, "rank1.jsonl: no such file or directory") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr %q: want one line naming rank1.jsonl", r.stderr)
	}
	if !strings.Contains(r.stdout, "== "+sample(t)+" ==") || !regexp.MustCompile(`(?m)^\s+.*rank1\.jsonl\s+failed`).MatchString(r.stdout) {
		t.Errorf("stdout lacks the good file's summary or the failed row:\n%s", r.stdout)
	}
}

// TestUsage checks that command-line mistakes exit 2 with the error and the
// usage on stderr (a command's own after a mistake in its line, the general
// one otherwise), and that help exits 0 with the usage on stdout.
func TestUsage(t *testing.T) {
	s := sample(t)
	data, err := os.ReadFile(s)
	if err != nil {
		t.Fatal(err)
	}
	own := writeFile(t, t.TempDir(), "own.jsonl", data) // a trace a failing case may overwrite
	cases := []struct {
		name   string
		args   []string
		code   int
		wantRe string
		reason string
	}{
		{"no command", nil, 2, `no command given`, "nothing to do is a usage error"},
		{"unknown command", []string{"sumary", s}, 2, `unknown command "sumary"`, "a misspelt command is named"},
		{"no trace", []string{"summary"}, 2, `summary: no trace file given`, "a trace is required"},
		{"two traces for profile", []string{"profile", s, s}, 2, `profile: want 1 trace file, got 2`, "profile takes one trace"},
		{"newline in a name", []string{"profile", s, "a\nb"}, 2, `profile: want 1 trace file, got 2: ".*", "a\\nb"$`, "the error is one line, whatever the names in it: the newline is escaped"},
		{"names with spaces", []string{"nodes", "a b", "c"}, 2, `nodes: want 1 trace file, got 2: "a b", "c"$`, "each name quoted, so that spaces in names are told apart (from a review)"},
		{"a glob of many", []string{"report", "-o", "x", "a", "b", "c", "d", "e"}, 2, `report: want 1 trace file, got 5: "a", "b", "c" and 2 more$`, "the first three names, not thousands on one line (from a review: 23 KB for 1000 files)"},
		{"stdin twice", []string{"summary", "-", "-"}, 2, `standard input \(-\) given more than once`, "stdin can be read once"},
		{"unknown flag", []string{"summary", "--color", s}, 2, `summary: flag provided but not defined: --color$`, "unknown flags are refused, and named as written (from a user trial: -color)"},
		{"unknown flag with one dash", []string{"summary", "-color", s}, 2, `summary: flag provided but not defined: -color$`, "a flag not defined is named as written, whatever its dashes"},
		{"unknown flag like a number", []string{"summary", "-10", s}, 2, `summary: flag provided but not defined: -10$`, "-10 is not given a second dash (from a review)"},
		{"unknown flag with a value", []string{"summary", "--tp=3", s}, 2, `summary: flag provided but not defined: --tp$`, "the name, without its value"},
		{"unknown flag after a value like it", []string{"report", "-o", "--x", "-x", s}, 2, `report: flag provided but not defined: -x$`, "the flag as typed, not an earlier value spelt like it (from a review)"},
		{"bad top", []string{"nodes", "--top", "x", s}, 2, `nodes: invalid value "x" for flag --top: not an integer$`, "--top takes an integer, and the value is quoted once"},
		{"negative top", []string{"nodes", "--top", "-1", s}, 2, `nodes: invalid value "-1" for flag --top: must be at least 0$`, "--top cannot be negative (0 lists all)"},
		{"negative top for summary", []string{"summary", "--top=-1", s}, 2, `summary: invalid value "-1" for flag --top: must be at least 0$`, "nor can summary's"},
		{"negative points for report", []string{"report", "--max-points", "-1", "-o", "x", s}, 2, `report: invalid value "-1" for flag --max-points: must be at least 0$`, "nor can the report's --max-points (0 keeps every point)"},
		{"hex top", []string{"summary", "--top", "0x2", s}, 2, `summary: invalid value "0x2" for flag --top: not an integer`, "--top is decimal: 0x2 is not taken for 2"},
		{"signed top", []string{"nodes", "--top", "+3", s}, 2, `nodes: invalid value "\+3" for flag --top: not an integer`, "nor is +3 taken for 3"},
		{"empty sort", []string{"nodes", "--sort=", s}, 2, `nodes: invalid value "" for flag --sort: want peak, residual or bytes`, "an empty --sort is no sort (from a mutation test)"},
		{"-o without a value", []string{"export", "--format", "csv", s, "-o"}, 2, `export: flag needs an argument: -o$`, "a one-letter flag is named with one dash, as the usage does (from a mutation test)"},
		{"huge top", []string{"nodes", "--top", "99999999999999999999", s}, 2, `nodes: invalid value "99999999999999999999" for flag --top: out of range$`, "an integer too big is said to be one"},
		{"output is the trace", []string{"export", "--format", "csv", "-o", own, own}, 2, `export: -o .*own\.jsonl is the trace itself, which it would overwrite`, "writing the output over the trace would lose the trace"},
		{"report over the trace", []string{"report", "-o", own, own}, 2, `report: -o .*own\.jsonl is the trace itself`, "likewise for report"},
		{"bad sort", []string{"nodes", "--sort", "size", s}, 2, `nodes: invalid value "size" for flag --sort: want peak, residual or bytes$`, "--sort has three values, and the value is quoted once (from a review)"},
		{"negative points", []string{"profile", "--max-points", "-1", s}, 2, `must be at least 0`, "--max-points cannot be negative"},
		{"flag without value", []string{"nodes", s, "--top"}, 2, `flag needs an argument: --top$`, "a trailing flag needs its value"},
		{"report without -o", []string{"report", s}, 2, `report: -o FILE is required`, "report writes a file"},
		{"export without format", []string{"export", "-o", "x", s}, 2, `export: --format chrome\|pprof\|csv is required`, "the export format is required"},
		{"export bad format", []string{"export", "--format", "svg", "-o", "x", s}, 2, `export: invalid value "svg" for flag --format: want chrome, pprof or csv$`, "unknown formats are named once"},
		{"export without -o", []string{"export", "--format", "csv", s}, 2, `export: -o FILE is required`, "export writes a file"},
		{"unknown one-letter flag", []string{"summary", "-x", s}, 2, `summary: flag provided but not defined: -x$`, "a one-letter flag keeps one dash, as -o does"},
		{"flag value like a flag", []string{"nodes", "--sort", "-peak", s}, 2, `nodes: invalid value "-peak" for flag --sort: want peak, residual or bytes$`, "only the flag's name gets two dashes, not a value that starts with one"},
		{"flag value like an error", []string{"nodes", "--sort", ": for flag -top: x", s}, 2, `nodes: invalid value ": for flag -top: x" for flag --sort: want peak, residual or bytes$`, "a value is never rewritten, whatever it holds (from a review)"},
		{"help for an unknown command", []string{"help", "sumary"}, 2, `unknown command "sumary"`, "help names a command that does not exist as a mistake"},
		{"help with two commands", []string{"help", "summary", "nodes"}, 2, `help: want 1 command, got 2: "summary", "nodes"$`, "help of one command does not drop what follows it without a word"},
		{"help with many", []string{"help", "a b", "c", "d", "e"}, 2, `help: want 1 command, got 4: "a b", "c", "d" and 1 more$`, "named as the commands of one trace name their files (from a review)"},
		{"help", []string{"help"}, 0, ``, "help is not an error"},
		{"--help", []string{"--help"}, 0, ``, "--help as the command prints the usage"},
		{"-help", []string{"-help"}, 0, ``, "so does -help"},
		{"-h", []string{"summary", "-h"}, 0, ``, "-h on a subcommand prints the usage"},
		{"--help after a trace", []string{"nodes", s, "--help"}, 0, ``, "so does --help anywhere among its arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCmd(t, nil, c.args...)
			if r.code != c.code {
				t.Fatalf("%s: exit status %d, want %d (stderr %q)", c.reason, r.code, c.code, r.stderr)
			}
			if c.code == 0 {
				if !strings.Contains(r.stdout, "usage: tracemem") || r.stderr != "" {
					t.Errorf("%s: want the usage on stdout only; stdout %q stderr %q", c.reason, r.stdout, r.stderr)
				}
				return
			}
			first, rest, _ := strings.Cut(r.stderr, "\n")
			if !regexp.MustCompile(`^tracemem: .*` + c.wantRe).MatchString(first) {
				t.Errorf("%s: first stderr line %q does not match %q", c.reason, first, c.wantRe)
			}
			// After a mistake in a command's line, that command's usage and
			// flags (from a user trial: the general usage lists none).
			want := "\nusage: tracemem COMMAND"
			if len(c.args) > 0 && usageLines(c.args[0]) != "" {
				want = "\nusage: tracemem " + c.args[0] + " "
				if !strings.Contains(rest, "\nFlags:\n") || strings.Contains(rest, "Commands:") {
					t.Errorf("%s: want %s's flags, not every command, after the error:\n%s", c.reason, c.args[0], rest)
				}
			}
			if !strings.Contains(rest, want) || r.stdout != "" {
				t.Errorf("%s: want %q after the error on stderr and nothing on stdout; stderr %q, stdout %q", c.reason, want, r.stderr, r.stdout)
			}
		})
	}
}

// TestCommandHelp: -h on a command prints that command's synopsis and each
// of its flags with its default, which the general usage does not give.
func TestCommandHelp(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string // lines the help must have, in this order
	}{
		{"summary", []string{"usage: tracemem summary [--top N] TRACE...", "Flags:", "  --top         allocations at the peak to list; 0 lists all (default 10)"}},
		{"profile", []string{"usage: tracemem profile [--max-points N] TRACE", "the memory profile as JSON on stdout", "  --max-points  timeline points kept per device; 0 keeps one per memory event (default 0)"}},
		{"nodes", []string{"usage: tracemem nodes [--top N] [--sort peak|residual|bytes] TRACE", "  --sort        rank by peak, residual or bytes (default peak)", "  --top         nodes to list; 0 lists all (default 20)"}},
		{"report", []string{"usage: tracemem report [--max-points N] -o FILE TRACE", "  --max-points  timeline points kept per device; 0 keeps one per memory event (a big file for a big trace) (default 2000)", "  -o            output HTML file (- for stdout)"}},
		{"export", []string{"usage: tracemem export --format chrome|pprof|csv [--max-points N] -o FILE TRACE", "csv:    the timeline, one row per point", "  --format      chrome, pprof or csv", "  -o            output file (- for stdout)"}},
	} {
		r := runCmd(t, nil, tc.cmd, "-h")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%s -h: exit status %d, stderr %q", tc.cmd, r.code, r.stderr)
		}
		if strings.Contains(r.stdout, "Commands:") {
			t.Errorf("%s -h printed the general usage:\n%s", tc.cmd, r.stdout)
		}
		if h := runCmd(t, nil, "help", tc.cmd); h != r {
			t.Errorf("help %s: %+v, want what %s -h gives (from a user trial)", tc.cmd, h, tc.cmd)
		}
		rest := r.stdout
		for _, line := range tc.want {
			_, after, ok := strings.Cut(rest, "\n"+line+"\n")
			if !ok && strings.HasPrefix(rest, line+"\n") {
				after, ok = rest[len(line)+1:], true
			}
			if !ok {
				t.Errorf("%s -h: no line %q (in this order) in:\n%s", tc.cmd, line, r.stdout)
				break
			}
			rest = "\n" + after
		}
	}
}

// TestOutputIsStdinTrace: -o naming the file that standard input reads is
// refused like -o naming the trace, for export and report, and the trace is
// left as it was.
func TestOutputIsStdinTrace(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	own := writeFile(t, t.TempDir(), "own.jsonl", data)
	for _, args := range [][]string{{"export", "--format", "csv", "-o", own, "-"}, {"report", "-o", own, "-"}} {
		f, err := os.Open(own)
		if err != nil {
			t.Fatal(err)
		}
		r := runCmd(t, f, args...)
		f.Close()
		if r.code != 2 || !strings.Contains(r.stderr, "is the trace itself") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and the trace refused as output", args[0], r.code, r.stderr)
		}
		if b, _ := os.ReadFile(own); !bytes.Equal(b, data) {
			t.Fatalf("%s: the trace was overwritten", args[0])
		}
	}
}

// TestOutputSameFile: -o is refused when it is the trace's file under
// another name (a hard link), and taken when it is another file of the same
// name in another directory (found by mutation: comparing names went
// unnoticed).
func TestOutputSameFile(t *testing.T) {
	data, err := os.ReadFile(sample(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	own := writeFile(t, dir, "own.jsonl", data)
	link := filepath.Join(dir, "link.csv")
	if err := os.Link(own, link); err != nil {
		t.Skip("no hard links here:", err)
	}
	if r := runCmd(t, nil, "export", "--format", "csv", "-o", link, own); r.code != 2 || !strings.Contains(r.stderr, "is the trace itself") {
		t.Errorf("-o a hard link of the trace: exit %d, stderr %q; want 2 and the trace refused as output", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(own); !bytes.Equal(b, data) {
		t.Fatal("the trace was overwritten through its hard link")
	}
	other := filepath.Join(dir, "sub", "own.jsonl")
	if err := os.Mkdir(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := runCmd(t, nil, "export", "--format", "csv", "-o", other, own); r.code != 0 {
		t.Errorf("-o another file of the trace's name: exit %d, stderr %q; want 0", r.code, r.stderr)
	}
}

// TestUsageNamesEveryFlag checks that the usage text lists, on each
// command's lines, every flag the command defines: the usage is written by
// hand, and summary's --top was once missing from it.
func TestUsageNamesEveryFlag(t *testing.T) {
	defined := map[string][]string{}
	flagsDefined = func(fs *flag.FlagSet) {
		fs.VisitAll(func(f *flag.Flag) { defined[fs.Name()] = append(defined[fs.Name()], f.Name) })
	}
	defer func() { flagsDefined = nil }()
	commands := []string{"summary", "profile", "nodes", "report", "export"}
	for _, cmd := range commands {
		if r := runCmd(t, nil, cmd, "-h"); r.code != 0 {
			t.Fatalf("%s -h: exit status %d", cmd, r.code)
		}
	}
	for _, cmd := range commands {
		if len(defined[cmd]) == 0 {
			t.Errorf("%s: no flags seen; the hook missed the command", cmd)
		}
		lines := usageLines(cmd)
		if lines == "" {
			t.Fatalf("the usage text has no line for %s", cmd)
		}
		for _, name := range defined[cmd] {
			if !regexp.MustCompile(`(^|[\s\[])--?` + regexp.QuoteMeta(name) + `[\s\]]`).MatchString(lines) {
				t.Errorf("the usage of %s does not name its flag -%s:\n%s", cmd, name, lines)
			}
		}
	}
}

// failWriter fails every write, as a full disk or a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestStdoutWriteFails: a command whose output cannot be written exits 1
// and says why, instead of losing its output silently.
func TestStdoutWriteFails(t *testing.T) {
	for _, args := range [][]string{
		{"summary", sample(t)},
		{"summary", sample(t), sample(t)},
		{"nodes", sample(t)},
		{"profile", sample(t)},
		{"export", "--format", "csv", "-o", "-", sample(t)},
		// Outputs under the 64 KiB buffer fail only when it is flushed
		// (found by mutation: an ignored flush went unnoticed).
		{"export", "--format", "pprof", "-o", "-", sample(t)},
		{"export", "--format", "csv", "--max-points", "1", "-o", "-", sample(t)},
		{"report", "-o", "-", sample(t)},
		// Help is output too (from a review: help > /dev/full said
		// nothing and exited 0).
		{"help"},
		{"-h"},
		{"help", "nodes"},
		{"summary", "-h"},
	} {
		var stderr bytes.Buffer
		// The write's own error, worded alike by every command (profile's
		// was inside the JSON encoder's, from a user trial).
		if code := run(args, nil, failWriter{}, &stderr); code != 1 || stderr.String() != "tracemem: no space left on device\n" {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 and the write error alone", args, code, stderr.String())
		}
	}
}

// TestDoubleDashEndsFlags checks that "--" ends the flags for the command:
// what follows, "--top" included, names trace files (TestParseFlags has
// the parser's cases).
func TestDoubleDashEndsFlags(t *testing.T) {
	// The command: "--top" and "1" are files that do not exist.
	trace := writeFile(t, t.TempDir(), "t.jsonl", []byte(jsonlTrace(startRec("r", "root", "", 0), memRec(1, "alloc", "x", "r", "cuda:0", 100, "activation"), endRec("r", 10))))
	r := runCmd(t, nil, "summary", "--", trace, "--top", "1")
	wantErr := "tracemem: --top: no such file or directory\ntracemem: 1: no such file or directory\n"
	if r.code != 1 || r.stderr != wantErr || !strings.Contains(r.stdout, "== "+trace+" ==") {
		t.Errorf("summary -- TRACE --top 1: exit %d, stderr %q; want exit 1, stderr %q and TRACE summarized", r.code, r.stderr, wantErr)
	}
}

// TestMissingFileNamedOnce checks that a file that cannot be opened is
// named once, by the path given, with the OS's reason after it.
func TestMissingFileNamedOnce(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nosuch.jsonl")
	cases := []struct {
		name   string
		args   []string
		reason string
	}{
		{"summary", []string{"summary", missing}, "summary reads the file"},
		{"nodes", []string{"nodes", missing}, "nodes the same way"},
		{"profile", []string{"profile", missing}, "profile the same way"},
	}
	for _, c := range cases {
		r := runCmd(t, nil, c.args...)
		want := "tracemem: " + missing + ": no such file or directory\n"
		if r.code != 1 || r.stderr != want {
			t.Errorf("%s: %s: exit %d, stderr %q; want exit 1 and %q (the path once, no \"open\")", c.name, c.reason, r.code, r.stderr, want)
		}
	}
}

// TestEmptyFileName: a file named by the empty string is named `""`, as the
// text outputs name an empty name, in every command (from a review: the
// line read "tracemem: : no such file or directory").
func TestEmptyFileName(t *testing.T) {
	for _, args := range [][]string{{"summary", ""}, {"summary", sample(t), ""}, {"profile", ""}, {"nodes", ""}, {"export", "--format", "csv", "-o", "-", ""}} {
		r := runCmd(t, nil, args...)
		if want := `tracemem: "": no such file or directory` + "\n"; r.code != 1 || !strings.HasSuffix(r.stderr, want) {
			t.Errorf("%q: exit %d, stderr %q; want 1 and %q", args, r.code, r.stderr, want)
		}
	}
}
