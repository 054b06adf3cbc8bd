// tap.go holds the line tap that collects run, span and op records from a JSONL trace while the streaming analysis reads it.

package main

import (
	"bytes"
	"io"

	"github.com/go-json-experiment/json"
)

// runInfo is what the command shows of a trace's run record.
type runInfo struct {
	id, entrypoint, phase, device string
}

// lineTap passes a JSONL stream through unchanged and hands each complete
// line to the collector as it goes by, so the analysis and the collection
// share one read of the input. Lines are handed over in the reader's
// goroutine, before Read returns.
type lineTap struct {
	r     io.Reader
	carry []byte // the start of a line not yet ended
	c     *collector
}

func (t *lineTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			t.carry = append(t.carry, data...)
			break
		}
		if len(t.carry) > 0 {
			t.carry = append(t.carry, data[:i]...)
			t.c.line(t.carry)
			t.carry = t.carry[:0]
		} else {
			t.c.line(data[:i])
		}
		data = data[i+1:]
	}
	if err != nil && len(t.carry) > 0 {
		t.c.line(t.carry)
		t.carry = nil
	}
	return n, err
}

// collector keeps the run, spans and (when asked) op names of the records
// it is shown. It decodes only the records of those kinds, found by their
// "kind" member without parsing the other records; a record it cannot decode
// is skipped (the analysis reports it).
type collector struct {
	tree    *spanTree
	run     *runInfo
	wantOps bool
	strs    map[string]string // interned names
}

func newCollector(wantOps bool) *collector {
	return &collector{tree: newSpanTree(), wantOps: wantOps, strs: make(map[string]string)}
}

func (c *collector) intern(s string) string {
	if v, ok := c.strs[s]; ok {
		return v
	}
	c.strs[s] = s
	return s
}

// tapRecord holds the members of the records the collector reads.
type tapRecord struct {
	Kind       string `json:"kind"`
	ID         string `json:"id"`
	ParentID   string `json:"parent_id"`
	Name       string `json:"name"`
	StartNs    uint64 `json:"start_ns"`
	DurationNs uint64 `json:"duration_ns"`
	SpanKind   string `json:"span_kind"`
	Step       string `json:"step"`
	SpanID     string `json:"span_id"`
	OpName     string `json:"op_name"`
	RunID      string `json:"run_id"`
	Entrypoint string `json:"entrypoint"`
	Phase      string `json:"phase"`
	Device     string `json:"device"`
}

var kindKey = []byte(`"kind"`)

// recordKind returns the value of the first "kind" member of a JSON line,
// or "" when it has none that is a plain string.
func recordKind(line []byte) []byte {
	i := bytes.Index(line, kindKey)
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(line[i+len(kindKey):], " \t\r")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r")
	if len(rest) == 0 || rest[0] != '"' {
		return nil
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return nil
	}
	return rest[1 : 1+end]
}

func (c *collector) line(line []byte) {
	switch k := recordKind(line); string(k) {
	case "span_start", "span_end", "meta":
	case "op":
		if !c.wantOps {
			return
		}
	default:
		return
	}
	var r tapRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return
	}
	switch r.Kind {
	case "meta":
		if c.run == nil {
			c.run = &runInfo{id: r.RunID, entrypoint: r.Entrypoint, phase: r.Phase, device: r.Device}
		}
	case "span_start":
		s := spanInfo{id: r.ID, parent: c.intern(r.ParentID), name: c.intern(r.Name), startNs: r.StartNs}
		_ = s.kind.UnmarshalText([]byte(r.SpanKind))
		_ = s.step.UnmarshalText([]byte(r.Step))
		c.tree.addSpan(s)
	case "span_end":
		c.tree.endSpan(r.ID, r.DurationNs)
	case "op":
		c.tree.addOp(c.intern(r.SpanID), c.intern(r.OpName))
	}
}
