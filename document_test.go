package tracemem

import (
	"bytes"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tracemem/tracemem/internal/gen"
)

// readOnlyDocs are documents that take every path of the functions that read
// a document: spans out of id order (the index map), memory out of time
// order (the sort), a breakdown big enough for the radix sort and buffers
// big enough to be mapped in ahead. The names of the two big ones start
// with "big": readAll does not write them, as the writers take no path
// there the others miss, and take seconds under the race detector.
func readOnlyDocs(t *testing.T) map[string]*TraceDocument {
	docs := map[string]*TraceDocument{
		"big anomalies": genDoc(t, gen.Config{Seed: 3, MemoryEvents: 24_000, Devices: 2, Spans: 2_000, Anomalies: true, SampleEvery: 9}),
		"big steady":    genDoc(t, gen.Config{Seed: 4, MemoryEvents: 10_000, Devices: 2, Spans: 1_000, SteadyGrowth: true}),
	}
	unsorted := genDoc(t, gen.Config{Seed: 5, MemoryEvents: 3_000, Devices: 3, Spans: 300, Anomalies: true})
	slices.Reverse(unsorted.Memory[100:2000])
	slices.Reverse(unsorted.Spans)
	docs["unsorted"] = unsorted
	for seed := range 50 {
		docs["random"+string(rune('A'+seed%26))+string(rune('a'+seed/26))] = randomDoc(rand.New(rand.NewPCG(uint64(seed), 99)))
	}
	return docs
}

// readAll runs everything that only reads a document (the writers only
// when write is set) and returns what each gave.
func readAll(doc *TraceDocument, opNodeIDs map[OpKey]string, write bool) []any {
	p, err := Analyze(doc, Options{MaxTimelinePoints: 7})
	got := []any{
		AnalyzeMemory(doc),
		p, errString(err),
		NodeMemoryMetrics(doc, opNodeIDs),
		errString(doc.Validate()),
	}
	tree := NewSpanTree(doc)
	var paths [][]string
	for _, s := range doc.Spans[:min(len(doc.Spans), 1000)] {
		paths = append(paths, tree.Path(s.ID))
	}
	got = append(got, paths)
	if write {
		var jsonl, js bytes.Buffer
		jsonlErr := doc.WriteJSONL(&jsonl)
		jsErr := doc.WriteJSON(&js)
		got = append(got, jsonl.String(), errString(jsonlErr), js.String(), errString(jsErr))
	}
	return got
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestDocumentReadOnly: Analyze, AnalyzeMemory, NodeMemoryMetrics, Validate,
// a SpanTree and the writers leave the document as it was, down to the
// elements of its shapes, so that a caller may keep using it (doc.go
// promises as much).
func TestDocumentReadOnly(t *testing.T) {
	for name, doc := range readOnlyDocs(t) {
		want := deepCopy(reflect.ValueOf(doc)).Interface().(*TraceDocument)
		opNodeIDs := map[OpKey]string{{SpanID: "s1", Index: 0}: "node"}
		readAll(doc, opNodeIDs, !strings.HasPrefix(name, "big"))
		// DeepEqual first: cmp.Diff of the big documents takes seconds under
		// the race detector.
		if reflect.DeepEqual(want, doc) {
			continue
		}
		if diff := cmp.Diff(want, doc); diff != "" {
			t.Errorf("%s: the document changed (-before +after):\n%s", name, diff)
		}
	}
}

// TestDocumentConcurrentReads: any number of goroutines may run the
// functions that read a document on one document at once, and each gets the
// answers a lone call gets. Run with -race to check the promise of doc.go.
func TestDocumentConcurrentReads(t *testing.T) {
	for name, doc := range readOnlyDocs(t) {
		write := !strings.HasPrefix(name, "big")
		want := readAll(doc, nil, write)
		const n = 3
		got := make([][]any, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { got[i] = readAll(doc, nil, write) })
		}
		wg.Wait()
		for i := range n {
			if reflect.DeepEqual(want, got[i]) {
				continue
			}
			if diff := cmp.Diff(want, got[i]); diff != "" {
				t.Errorf("%s: goroutine %d got other answers than a lone call (-want +got):\n%s", name, i, diff)
			}
		}
	}
}

// deepCopy copies v and everything it points to, so that a change made
// through the original shows as a difference from the copy.
func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(deepCopy(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(deepCopy(v.Index(i)))
		}
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(deepCopy(it.Key()), deepCopy(it.Value()))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		for i := range v.NumField() {
			c.Field(i).Set(deepCopy(v.Field(i)))
		}
		return c
	default:
		return v
	}
}

// TestDocJSONLRecords: the JSONL section of doc.go lists every record kind
// the decoder reads and no other, and its sample trace reads as it says
// (one span, closed, and one allocation in it). A user trial found the
// format described nowhere a user looks.
func TestDocJSONLRecords(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var sample strings.Builder
	inTable := false
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSuffix(line, "\n")
		body, ok := strings.CutPrefix(line, "//\t")
		switch {
		case ok && strings.HasPrefix(body, "kind "):
			inTable = true
		case ok && inTable:
			kinds = append(kinds, strings.Fields(body)[0])
		case ok && strings.HasPrefix(body, `{"kind":`):
			sample.WriteString(body + "\n")
		default:
			inTable = false
		}
	}
	if want := recordKindNames[1:]; !cmp.Equal(kinds, want[:]) {
		t.Errorf("doc.go lists kinds %q, the decoder reads %q", kinds, want)
	}
	doc, err := ReadTrace(strings.NewReader(sample.String()))
	if err != nil {
		t.Fatalf("doc.go's sample trace: %v\n%s", err, sample.String())
	}
	if len(doc.Spans) != 1 || !doc.Spans[0].Closed || len(doc.Memory) != 1 || doc.Memory[0].SpanID != doc.Spans[0].ID {
		t.Errorf("doc.go's sample trace reads as %+v, want one closed span and one allocation in it", doc)
	}
}
