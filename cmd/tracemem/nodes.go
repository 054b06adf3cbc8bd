// nodes.go holds the nodes subcommand: the spans and ops with the most memory.

package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/tracemem/tracemem"
)

// nodeSort is the metric the nodes subcommand ranks by.
type nodeSort string

const (
	sortPeak     nodeSort = "peak"
	sortResidual nodeSort = "residual"
	sortBytes    nodeSort = "bytes"
)

func (s *nodeSort) String() string { return string(*s) }

func (s *nodeSort) Set(v string) error {
	switch nodeSort(v) {
	case sortPeak, sortResidual, sortBytes:
		*s = nodeSort(v)
		return nil
	}
	return errors.New("want peak, residual or bytes") // the flag's error quotes v
}

// metric returns the node's value for the sort.
func (s nodeSort) metric(m tracemem.NodeMetrics) uint64 {
	switch s {
	case sortResidual:
		return m.ResidualBytes
	case sortBytes:
		return m.Bytes
	}
	return m.PeakBytes
}

func cmdNodes(e *env, args []string) error {
	fs := e.newFlags("nodes")
	top := boundedInt{v: 20, min: 0}
	by := sortPeak
	fs.Var(&top, "top", "nodes to list; 0 lists all")
	fs.Var(&by, "sort", "rank by peak, residual or bytes")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkFiles("nodes", files, 1); err != nil {
		return err
	}
	if err := checkStdout(e, "nodes", files); err != nil {
		return err
	}
	t, err := loadOne(e, files[0], nodesLoad)
	if err != nil {
		return err
	}
	out := &stickyWriter{w: e.stdout}
	writeNodes(out, t, by, top.v)
	if notes := allocatorNotes(t); len(notes) > 0 {
		fmt.Fprintln(out) // as summary ends, what the figures leave out
		for _, n := range notes {
			fmt.Fprintf(out, "%s: %s\n", n[0], n[1])
		}
	}
	return out.err
}

// rankedNode is one node of the node metrics.
type rankedNode struct {
	key string
	m   tracemem.NodeMetrics
}

// rankNodes returns the top nodes (all for top 0) by the metric, then by
// peak, residual and bytes, then by key; nodes whose metric is 0 are left
// out.
func rankNodes(nodes map[string]tracemem.NodeMetrics, by nodeSort, top int) []rankedNode {
	all := make([]rankedNode, 0, len(nodes))
	for k, m := range nodes {
		if by.metric(m) > 0 {
			all = append(all, rankedNode{k, m})
		}
	}
	slices.SortFunc(all, func(a, b rankedNode) int {
		return cmp.Or(
			cmp.Compare(by.metric(b.m), by.metric(a.m)),
			cmp.Compare(b.m.PeakBytes, a.m.PeakBytes),
			cmp.Compare(b.m.ResidualBytes, a.m.ResidualBytes),
			cmp.Compare(b.m.Bytes, a.m.Bytes),
			cmp.Compare(a.key, b.key),
		)
	})
	if top > 0 {
		all = all[:min(top, len(all))]
	}
	return all
}

// writeNodes writes the node table.
func writeNodes(w io.Writer, t *trace, by nodeSort, top int) {
	ranked := rankNodes(t.nodes, by, top)
	fmt.Fprintf(w, "== %s ==\n", printable(t.name))
	zero := 0
	for _, m := range t.nodes {
		if by.metric(m) == 0 {
			zero++
		}
	}
	metric := string(by) + " bytes"
	if by == sortBytes {
		metric = "requested bytes"
	}
	fmt.Fprintf(w, "top %d of %d %s by %s (sizes 1024-based)", len(ranked), len(t.nodes), plural(uint64(len(t.nodes)), "node", "nodes"), metric)
	if zero > 0 {
		fmt.Fprintf(w, "; %d with 0 not listed", zero)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "peak: most bytes live at once that its subtree allocated, summed over devices;")
	fmt.Fprintln(w, "residual: bytes its subtree allocated still live when it ended; bytes: requested by the node (a span: its own ops)")
	if len(ranked) == 0 {
		// By this sort: another may list some. Without memory events, say
		// why, as summary does (and for a PyTorch trace, when it has them).
		why := ""
		switch {
		case t.profile != nil && !hasMemory(t.profile):
			why = ": " + noMemoryEvents(t.run)
		case by == sortBytes && t.run != nil && t.run.source == "chrome_trace":
			why = ": a PyTorch trace gives no op's output shapes and dtypes, which the requested bytes are counted from (--sort peak or residual lists what the nodes allocated)"
		}
		fmt.Fprintf(w, "\n  no node has %s%s\n", metric, why)
		return
	}
	fmt.Fprintln(w)
	tb := newTable("PEAK", "RESIDUAL", "BYTES", "KIND", "NODE", "PATH").alignRight(0, 1, 2)
	for _, n := range ranked {
		ref := t.tree.describeNode(n.key)
		tb.add(formatBytes(n.m.PeakBytes), formatBytes(n.m.ResidualBytes), formatBytes(n.m.Bytes), ref.kind, idCell(n.key), ref.path)
	}
	tb.write(w, "  ")
}

// nodesLoad is what nodes needs of a trace: node metrics, and op names to
// name op nodes.
var nodesLoad = loadOptions{opts: tracemem.Options{MaxTimelinePoints: fewTimelinePoints}, wantNodes: true, wantOps: true}
