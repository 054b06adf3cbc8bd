// profilecmd.go holds the profile subcommand: the MemoryProfile of a trace as JSON.

package main

import (
	"bufio"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/tracemem/tracemem"
)

func cmdProfile(e *env, args []string) error {
	fs := e.newFlags("profile")
	points := boundedInt{v: 0, min: 0}
	fs.Var(&points, "max-points", "timeline points kept per device; 0 keeps one per memory event")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkFiles("profile", files, 1); err != nil {
		return err
	}
	if err := checkStdout(e, "profile", files); err != nil {
		return err
	}
	t, err := loadOne(e, files[0], profileLoad(points.v))
	if err != nil {
		return err
	}
	noteNoMemory(e, t, "the profile holds zeros")
	noteAllocator(e, t)
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	if err := json.MarshalWrite(w, t.profile, jsontext.WithIndentPrefix(""), jsontext.WithIndent("  ")); err != nil {
		if ferr := w.Flush(); ferr != nil {
			return ferr // the output's own error, as the other commands report it
		}
		return err
	}
	if err := w.WriteByte('\n'); err != nil {
		return err
	}
	return w.Flush()
}

// profileLoad is what profile needs of a trace, keeping points timeline
// points (0: all). The profile names no span paths: a JSONL trace streams
// without a tap, its memory bounded by what is live and the points kept.
// Without the tap, a span id used again after its span ended is not
// refused, as the commands that name spans refuse it: the stream takes it
// for a new span (the README's streaming rule).
func profileLoad(points int) loadOptions {
	return loadOptions{opts: tracemem.Options{MaxTimelinePoints: points}, noSpans: true}
}
