// export.go holds the export subcommand and the writing of output files.

package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/tracemem/tracemem"
)

// exportFormat is a format of the export subcommand.
type exportFormat string

const (
	formatChrome exportFormat = "chrome"
	formatPprof  exportFormat = "pprof"
	formatCSV    exportFormat = "csv"
)

func (f *exportFormat) String() string { return string(*f) }

func (f *exportFormat) Set(v string) error {
	switch exportFormat(v) {
	case formatChrome, formatPprof, formatCSV:
		*f = exportFormat(v)
		return nil
	}
	return errors.New("want chrome, pprof or csv") // the flag's error quotes v
}

func cmdExport(e *env, args []string) error {
	fs := e.newFlags("export")
	var format exportFormat
	var out string
	points := boundedInt{v: 0, min: 0}
	fs.Var(&format, "format", "chrome, pprof or csv")
	fs.StringVar(&out, "o", "", "output file (- for stdout)")
	fs.Var(&points, "max-points", "timeline points kept per device, for chrome and csv (pprof has no timeline); 0 keeps one per memory event")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if format == "" {
		return usagef("export: --format chrome|pprof|csv is required")
	}
	if out == "" {
		return usagef("export: -o FILE is required")
	}
	if err := checkFiles("export", files, 1); err != nil {
		return err
	}
	if err := checkOutput(e, "export", out, files[0]); err != nil {
		return err
	}
	t, err := loadOne(e, files[0], exportLoad(format, points.v))
	if err != nil {
		return err
	}
	switch format {
	case formatChrome:
		if t.tree != nil && t.tree.len() > 0 {
			noteNoMemory(e, t, "the export has spans but no memory counters")
		} else {
			noteNoMemory(e, t, "the export has no spans either: it is empty")
		}
	case formatPprof:
		noteNoMemory(e, t, "the pprof profile has no samples")
	case formatCSV:
		noteNoMemory(e, t, "the CSV has its header only")
	}
	noteAllocator(e, t)
	return writeOutput(e, out, func(w io.Writer) error {
		switch format {
		case formatChrome:
			return writeChrome(w, t)
		case formatPprof:
			return writePprof(w, t)
		}
		return writeCSV(w, t)
	})
}

// noteNoMemory says on stderr that t has no memory events, when it has
// none, and what that leaves of the output: a file that is valid but empty
// should not pass for an answer without a word (the exit status stays 0).
func noteNoMemory(e *env, t *trace, leaves string) {
	if s := &t.profile.Summary; s.AllocCount == 0 && s.FreeCount == 0 {
		fmt.Fprintf(e.stderr, "tracemem: note: %s: %s; %s\n", printable(t.name), noMemoryEvents(t.run), leaves)
	}
}

// noteAllocator says on stderr what summary and the report say in their text
// of a PyTorch trace's allocator: the allocations that failed and the
// events lost, which no figure counts. The JSON and the exports have no
// place for it, and their figures should not pass for the whole story.
func noteAllocator(e *env, t *trace) {
	for _, n := range allocatorNotes(t) {
		fmt.Fprintf(e.stderr, "tracemem: note: %s: %s: %s\n", printable(t.name), n[0], n[1])
	}
}

// exportLoad is what export needs of a trace, in format, keeping points
// timeline points (0: all).
func exportLoad(format exportFormat, points int) loadOptions {
	lo := loadOptions{opts: tracemem.Options{MaxTimelinePoints: points}}
	switch format {
	case formatPprof:
		lo.opts.MaxTimelinePoints = fewTimelinePoints // the pprof profile has no timeline
	case formatCSV:
		lo.noSpans = true // the timeline names no spans: as for profileLoad, a span id used again is not refused
	}
	return lo
}

// writeOutput writes a file with write ("-", or the file standard output
// writes to, is stdout). A path that names nothing is created, and removed
// again when the output could not be written completely or the command was
// interrupted (see making); so is the missing target of a symlink, which
// the command creates as the system would. Anything else (a file, a
// symlink, a device, a FIFO) is opened for writing as it stands and never
// removed: the command deletes only what it made. The file is opened write-only, so that a FIFO
// whose reader has gone fails the write instead of waiting for a reader
// forever.
func writeOutput(e *env, path string, write func(io.Writer) error) error {
	if path == "-" || isStdout(e, path) {
		bw := bufio.NewWriterSize(e.stdout, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	// Named as the output (-o), so that it does not read as the trace's
	// error.
	f, made, err := openOutput(path)
	if err != nil {
		return &fileError{file: "-o " + path, err: unwrapPath(err)}
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	// Written whole, or removed: no longer the interrupt's to remove, in
	// one step (see making).
	making.Lock()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil && made != "" {
		os.Remove(made)
	}
	making.path, making.f = "", nil
	making.Unlock()
	if err != nil {
		return &fileError{file: "-o " + path, err: unwrapPath(err)}
	}
	return nil
}

// isStdout reports whether path names the file standard output writes to
// (-o /dev/stdout, say): opening it again would truncate it, losing what the
// shell put there before (>> appends, a group of commands shares one file)
// and writing over it from the start, so the output goes to standard output
// instead, as with "-o -".
func isStdout(e *env, path string) bool {
	f, ok := e.stdout.(*os.File)
	if !ok {
		return false
	}
	si, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(path)
	return err == nil && os.SameFile(si, pi)
}

// checkOutput refuses an output file that is the trace itself (also as
// standard input), which writing would destroy (the trace is read whole
// before the output is opened, so the output would be right, but the trace
// lost). It also reports, before the trace is read, what the open of the
// output after it would: a directory, a symlink loop, or a new file (or a
// symlink's target) in a directory that is not there (a typo in -o should
// not cost the minutes a big trace takes). Whether the file can be written
// is left to the open: only it can tell. "-o -", and an -o naming the file
// standard output writes to, are checked as standard output (checkStdout).
func checkOutput(e *env, cmd, out, trace string) error {
	if out == "-" {
		return checkStdout(e, cmd, []string{trace})
	}
	oi, err := os.Stat(out)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) { // not a directory, a symlink loop, no permission: as the open would say
			return &fileError{file: "-o " + out, err: unwrapPath(err)}
		}
		// A new file, or the target of a symlink to nothing, which the
		// open makes: its directory must be there.
		path := out
		for n := 0; ; n++ {
			target, lerr := linkTarget(path)
			if lerr != nil {
				break // not a link: the file to make
			}
			if n == maxLinks {
				return &fileError{file: "-o " + out, err: errTooManyLinks}
			}
			path = target
		}
		if _, derr := os.Stat(cmp.Or(dirPrefix(path), ".")); derr != nil {
			return &fileError{file: "-o " + out, err: unwrapPath(derr)}
		}
		return nil
	}
	if oi.IsDir() {
		return &fileError{file: "-o " + out, err: syscall.EISDIR}
	}
	if isStdout(e, out) { // written through standard output: appended, not overwritten
		return checkStdout(e, cmd, []string{trace})
	}
	if ti := traceFileInfo(e, trace); ti != nil && os.SameFile(oi, ti) {
		return usagef("%s: -o %s is the trace itself, which it would overwrite", cmd, out)
	}
	return nil
}

// checkStdout refuses standard output when it is the file of one of the
// traces, as in `tracemem profile t.jsonl >> t.jsonl`: the output would be
// appended to the trace (with >, the shell has emptied it already, and the
// error says why it is empty).
func checkStdout(e *env, cmd string, traces []string) error {
	f, ok := e.stdout.(*os.File)
	if !ok {
		return nil
	}
	si, err := f.Stat()
	if err != nil || !si.Mode().IsRegular() {
		return nil
	}
	for _, trace := range traces {
		if ti := traceFileInfo(e, trace); ti != nil && os.SameFile(si, ti) {
			if trace == "-" {
				return usagef("%s: standard output is the file standard input reads the trace from; write the output to another file", cmd)
			}
			return usagef("%s: standard output is the trace %s itself; write the output to another file", cmd, trace)
		}
	}
	return nil
}

// traceFileInfo returns the FileInfo of the regular file the trace argument
// names (for "-", standard input's), or nil.
func traceFileInfo(e *env, trace string) os.FileInfo {
	var ti os.FileInfo
	var err error
	if trace == "-" {
		f, ok := e.stdin.(*os.File)
		if !ok {
			return nil
		}
		ti, err = f.Stat()
	} else {
		ti, err = os.Stat(trace)
	}
	if err != nil || !ti.Mode().IsRegular() {
		return nil
	}
	return ti
}

// openOutput opens path for writing, truncated. made is the file it
// created ("" when it opened one that was there): path, or the target of
// a symlink to nothing, followed link by link (O_CREAT alone would create
// it without saying so). A file it creates is also recorded in making, for
// an interrupt to remove, until writeOutput is done with it.
func openOutput(path string) (f *os.File, made string, err error) {
	for range maxLinks + 1 { // the path, then each link's target
		// Created and recorded as one step for an interrupt (see making).
		making.Lock()
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			making.path, making.f = path, f
		}
		making.Unlock()
		if err == nil {
			return f, path, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			return f, "", err
		}
		target, lerr := linkTarget(path)
		if lerr != nil {
			return nil, "", err // gone in between: say so
		}
		path = target
	}
	return nil, "", errTooManyLinks
}

// maxLinks is how many symlinks the output's path may go through, as on
// Linux.
const maxLinks = 40

// errTooManyLinks is for a path through more than maxLinks symlinks, in
// the words of Linux's ELOOP (which not every system has).
var errTooManyLinks = errors.New("too many levels of symbolic links")

// linkTarget returns the path the symlink path points to, as the system
// follows it: a relative target is relative to the link's directory.
func linkTarget(path string) (string, error) {
	target, err := os.Readlink(path)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(target) {
		target = dirPrefix(path) + target
	}
	return target, nil
}

// dirPrefix returns path's directory as written, up to and with its last
// separator ("" for a bare name): not cleaned, as the system reads it
// (L/.. is not . when L is a symlink: the system follows L, then goes up
// from its target).
func dirPrefix(path string) string {
	return path[:strings.LastIndexAny(path, string(filepath.Separator)+"/")+1]
}

// unwrapPath drops the operation and path of a *fs.PathError (the caller
// names the file).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
