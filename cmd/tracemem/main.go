// main.go holds the tracemem command's entry point, subcommand dispatch and flag parsing.

// Command tracemem analyzes memory traces of ML workloads: it prints a
// summary, the memory profile as JSON or the nodes with the most memory,
// writes a self-contained HTML report, and exports the timeline and the
// memory live at the peak as Chrome trace JSON, pprof or CSV.
//
// Every command takes any trace ReadTrace accepts (a candle-graph JSONL
// stream, the document JSON, a PyTorch Chrome trace), gzipped or not, or "-"
// for standard input. JSONL traces stream through the analysis without being
// held in memory, except a JSONL file whose records come in an order a
// stream cannot take, which is read again and analyzed whole (from a pipe,
// that is an error), and one whose first line is over 1 MiB with its "kind"
// beyond the first MiB, read whole like the other formats.
//
// summary takes several traces too (one per rank of a run, say): it
// analyzes them in parallel, writes each one's summary in argument order as
// soon as it and those before it are done, and ends with a table comparing
// them, a * on every file at the highest peak. A file that fails is named
// on stderr at its place and the others go on (exit status 1).
//
// A span path is the names of the spans from the root of the call tree down
// to a span, joined with " > "; a path of more than 12 names is shown as
// its first 2 and last 10 around "…" (pprof stacks keep up to 1024 frames).
//
// The text outputs (summary, nodes, report) print sizes in 1024-based units
// (1 KiB = 1024 bytes, 1 MiB = 1024 KiB, 1 GiB = 1024 MiB, 1 TiB = 1024 GiB)
// and times in milliseconds since the trace started; profile and the csv export
// keep bytes and nanoseconds, the chrome export bytes and microseconds (its
// format's unit). "tracemem COMMAND -h" lists a command's flags and their
// defaults.
//
// Exit status: 0 on success, 1 when a trace cannot be read or analyzed (one
// line on stderr naming the file and the line or byte offset) or the output
// cannot be written, 2 for a usage error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	handleInterrupts()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usageText = `usage: tracemem COMMAND [flags] TRACE...

Commands:
  summary [--top N] TRACE...               plain-text report: devices, peak, peak by category,
                                           top allocations at the peak, anomalies, event counts;
                                           several files (one per rank) add a comparison table
  profile [--max-points N] TRACE           the memory profile as JSON on stdout
  nodes [--top N] [--sort peak|residual|bytes] TRACE
                                           the spans and ops with the most memory
  report [--max-points N] -o FILE TRACE    a self-contained HTML report with a timeline per device
  export --format chrome|pprof|csv [--max-points N] -o FILE TRACE
                                           chrome: Chrome trace JSON (Perfetto, chrome://tracing)
                                           pprof:  gzipped profile.proto of the memory live at the peak
                                           csv:    the timeline, one row per point

TRACE is a candle-graph trace (JSONL or document JSON) or a PyTorch Chrome trace,
gzipped or not; "-" reads standard input. Flags may come before or after TRACE;
"tracemem COMMAND -h" lists a command's flags and their defaults.
Text (summary, nodes, report) gives sizes in 1024-based units (KiB to TiB) and
times in ms since the trace start; profile and csv give bytes and ns, chrome bytes and µs.
A span path is the span names from the root down, joined with " > ".
`

// usageError is a mistake in the command line: exit status 2 with the usage.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// env is what a subcommand runs with; tests run the command in-process.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	flags  *flag.FlagSet // the subcommand's, once it made them; its usage follows a usage error
}

// run runs the command line args (without the program name) and returns the
// exit status. It never calls os.Exit.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		fmt.Fprint(stderr, "tracemem: no command given\n\n", usageText)
		return 2
	}
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "summary":
		err = cmdSummary(e, rest)
	case "profile":
		err = cmdProfile(e, rest)
	case "nodes":
		err = cmdNodes(e, rest)
	case "report":
		err = cmdReport(e, rest)
	case "export":
		err = cmdExport(e, rest)
	case "help", "-h", "-help", "--help":
		if len(rest) > 1 && cmd == "help" {
			err = usagef("help: want 1 command, got %d: %s", len(rest), someQuoted(rest))
			break
		}
		if len(rest) > 0 && cmd == "help" {
			return run([]string{rest[0], "-h"}, stdin, stdout, stderr) // help CMD is CMD -h
		}
		err = writeHelp(stdout, usageText)
	default:
		err = usagef("unknown command %q", cmd)
	}
	return e.exitStatus(err)
}

// exitStatus reports err on stderr and returns the exit status for it.
func (e *env) exitStatus(err error) int {
	var ue *usageError
	var he *helpError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &he):
		return e.exitStatus(writeHelp(e.stdout, commandUsage(he.fs)))
	case errors.As(err, &ue) && e.flags != nil:
		// A mistake in a command's line: that command's usage, not all.
		fmt.Fprintf(e.stderr, "tracemem: %s\n\n%s\n\"tracemem -h\" lists every command.\n", oneLine(ue.msg), commandUsage(e.flags))
		return 2
	case errors.As(err, &ue):
		fmt.Fprintf(e.stderr, "tracemem: %s\n\n%s", oneLine(ue.msg), usageText)
		return 2
	case errors.Is(err, errReported):
		return 1
	default:
		fmt.Fprintf(e.stderr, "tracemem: %s\n", oneLine(err.Error()))
		return 1
	}
}

// writeHelp writes the help text asked for, whose write can fail like any
// output's (help > /dev/full).
func writeHelp(w io.Writer, text string) error {
	_, err := io.WriteString(w, text)
	return err
}

// stickyWriter passes writes through and keeps the first error, so that a
// text output made of many small writes checks once, at its end.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// someQuoted returns the first three of args, quoted, and the count of the
// rest, for an error that names the arguments it got too many of: quoted,
// names with spaces are told apart, and a glob of thousands makes no line
// of kilobytes (from a review: 23 KB for 1000 files).
func someQuoted(args []string) string {
	const shown = 3
	names := make([]string, 0, shown)
	for _, a := range args[:min(len(args), shown)] {
		names = append(names, strconv.Quote(a))
	}
	s := strings.Join(names, ", ")
	if len(args) > shown {
		s += fmt.Sprintf(" and %d more", len(args)-shown)
	}
	return s
}

// errReported means the errors were already written to stderr.
var errReported = errors.New("errors reported")

// oneLine keeps an error message on one line, its control characters
// (newlines and tabs too) and invalid bytes escaped as the text outputs
// escape names (see printable), its spaces kept: a file name in the
// system's error text can hold any byte, an escape sequence that would
// drive the terminal included, and a name or value quoted in an error must
// read as it is (white space squashed to one space named another file).
func oneLine(s string) string {
	return printable(strings.TrimPrefix(s, "tracemem: "))
}

// newFlags returns a flag set for subcommand name that reports to nothing:
// the errors become usage errors, followed by the command's usage.
func (e *env) newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	e.flags = fs
	return fs
}

// parseFlags parses args with fs, allowing flags before and after the
// positional arguments ("--" ends the flags), and returns the positional
// arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	if flagsDefined != nil {
		flagsDefined(fs)
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, &helpError{fs}
			}
			return nil, usagef("%s: %s", fs.Name(), flagError(fs, args, err.Error()))
		}
		rest := fs.Args()
		if stoppedAtDashes(fs, args[:len(args)-len(rest)]) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stopped at a positional argument: keep it, parse on.
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagError rewrites an error of package flag, which names flags with one
// dash (-top), to name them as the usage does (--top, -o), and a flag that
// is not defined as the user wrote it in args. Values, which the errors
// quote, are left as they are.
func flagError(fs *flag.FlagSet, args []string, msg string) string {
	dashed := func(name string) string {
		if len(name) == 1 {
			return "-" + name
		}
		return "--" + name
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		// Walk args as package flag does (it stops at the first
		// argument that is no flag, and every flag here takes a value),
		// so that a value like a flag (-o --x) is not taken for it.
		for i := 0; i < len(args); i++ {
			w, _, hasValue := strings.Cut(args[i], "=")
			n := strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-")
			if n == name && strings.HasPrefix(w, "-") {
				return "flag provided but not defined: " + w
			}
			if !hasValue && fs.Lookup(n) != nil {
				i++ // its value
			}
		}
		return msg
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok && fs.Lookup(name) != nil {
		return "flag needs an argument: " + dashed(name)
	}
	// invalid value "V" for flag -NAME: REASON, V quoted by %q (the
	// commands have no boolean flags, whose errors read otherwise).
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			after, ok := strings.CutPrefix(rest[len(q):], " for flag -")
			if name, reason, _ := strings.Cut(after, ": "); ok && fs.Lookup(name) != nil {
				return "invalid value " + q + " for flag " + dashed(name) + ": " + reason
			}
		}
	}
	return msg
}

// helpError is a subcommand's -h: exit status 0 with that command's usage.
type helpError struct{ fs *flag.FlagSet }

func (e *helpError) Error() string { return e.fs.Name() + ": " + flag.ErrHelp.Error() }
func (e *helpError) Unwrap() error { return flag.ErrHelp }

// commandUsage returns the usage of the subcommand fs parses: its synopsis
// and description from the usage text, then its flags with their defaults.
func commandUsage(fs *flag.FlagSet) string {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(usageLines(fs.Name())), "\n") {
		line = strings.TrimSpace(line)
		if i == 0 {
			synopsis, desc, _ := strings.Cut(line, "  ")
			b.WriteString("usage: tracemem " + synopsis + "\n\n")
			line = strings.TrimSpace(desc)
		}
		if line != "" {
			b.WriteString(line + "\n")
		}
	}
	b.WriteString("\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		name := "--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		fmt.Fprintf(&b, "  %-14s%s", name, f.Usage)
		if f.DefValue != "" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteByte('\n')
	})
	return b.String()
}

// usageLines returns the lines of the usage text that describe cmd: the
// line that starts with it and the indented lines that continue it ("" for
// a command the text does not have).
func usageLines(cmd string) string {
	var b strings.Builder
	in := false
	for line := range strings.Lines(usageText) {
		switch {
		case strings.HasPrefix(line, "  "+cmd+" "):
			in = true
		case in && !strings.HasPrefix(line, "    "):
			in = false
		}
		if in {
			b.WriteString(line)
		}
	}
	return b.String()
}

// stoppedAtDashes reports whether fs.Parse, having consumed these
// arguments, stopped at a "--" in a flag's place, not at one that was a
// flag's value (-o --).
func stoppedAtDashes(fs *flag.FlagSet, consumed []string) bool {
	for i := 0; i < len(consumed); i++ {
		if consumed[i] == "--" {
			return true
		}
		name, _, inline := strings.Cut(strings.TrimLeft(consumed[i], "-"), "=")
		if f := fs.Lookup(name); f != nil && !inline {
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
				i++ // its value
			}
		}
	}
	return false
}

// flagsDefined, when set (by tests), sees each subcommand's flags before
// they are parsed, so that a test can check the usage text names them all.
var flagsDefined func(*flag.FlagSet)

// boundedInt is a flag value that must be an integer ≥ min.
type boundedInt struct {
	v   int
	min int
}

func (b *boundedInt) String() string { return fmt.Sprint(b.v) }

func (b *boundedInt) Set(s string) error {
	// Decimal digits: not 0x2 or +3 (leading zeros are fine).
	s = strings.TrimSpace(s)
	digits := strings.TrimPrefix(s, "-")
	v, err := strconv.Atoi(s)
	if digits == "" || strings.Trim(digits, "0123456789") != "" || err != nil && !errors.Is(err, strconv.ErrRange) {
		return errors.New("not an integer") // the flag's error quotes s
	}
	if err != nil {
		return errors.New("out of range")
	}
	if v < b.min {
		return fmt.Errorf("must be at least %d", b.min)
	}
	b.v = v
	return nil
}
