package tracemem

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// TestLiveTableMatchesMap: random inserts and removes, checked against a
// map after every step. Small tables with few distinct keys make long runs
// that wrap around the end of the cells, where removal must move cells
// back across the wrap.
func TestLiveTableMatchesMap(t *testing.T) {
	for _, mask := range []uint64{^uint64(0), 7, 1, 0} {
		t.Run(fmt.Sprintf("mask=%#x", mask), func(t *testing.T) {
			defer func(m uint64) { liveKeyMask = m }(liveKeyMask)
			liveKeyMask = mask
			for seed := range 200 {
				r := rand.New(rand.NewPCG(uint64(seed), 3))
				var (
					store allocStore
					tab   liveTable
					ref   = map[string]int32{}
					ids   []MemoryEvent
				)
				for i := range 64 {
					ids = append(ids, MemoryEvent{TensorID: fmt.Sprintf("t%d", i)})
				}
				for step := range 400 {
					ev := &ids[r.IntN(len(ids))]
					h := hashID(ev.TensorID)
					slot, live := ref[ev.TensorID]
					switch {
					case live && r.IntN(2) == 0:
						tab.remove(slot, h)
						delete(ref, ev.TensorID)
					case !live:
						slot = store.add(liveAlloc{ev: ev})
						tab.insert(slot, h)
						ref[ev.TensorID] = slot
					}
					if tab.n != len(ref) {
						t.Fatalf("seed %d step %d: %d in the table, want %d", seed, step, tab.n, len(ref))
					}
					for i := range ids {
						id := ids[i].TensorID
						want, ok := ref[id]
						if !ok {
							want = -1
						}
						if got := tab.find(&store, id, hashID(id)); got != want {
							t.Fatalf("seed %d step %d: find(%s) = %d, want %d", seed, step, id, got, want)
						}
					}
				}
			}
		})
	}
}

// TestAllocStoreReserve: after reserve(n), the next n adds take slots in
// the chunks made so far or in the block reserve returned (the memory
// mapped in ahead), none in a new chunk; slots keep their values and
// addresses whatever is reserved or added later.
func TestAllocStoreReserve(t *testing.T) {
	for _, c := range []struct {
		name      string
		before, n int // adds before reserve; slots reserved
		wantBlock bool
		after     int // adds after the reserved ones
	}{
		{"empty store", 0, 3 * allocChunk, true, 10},
		{"mid chunk", 100, 2*allocChunk + 7, true, allocChunk},
		{"on a chunk boundary", allocChunk, allocChunk, true, 1},
		{"room enough", 100, allocChunk - 100, false, 5},
		{"nothing", 0, 0, false, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s allocStore
			evs := make([]MemoryEvent, c.before+c.n+c.after)
			var ptrs []*liveAlloc
			add := func() {
				i := len(ptrs)
				if got := s.add(liveAlloc{ev: &evs[i], seq: uint64(i)}); got != int32(i) {
					t.Fatalf("add %d returned slot %d", i, got)
				}
				ptrs = append(ptrs, s.at(int32(i)))
			}
			for range c.before {
				add()
			}
			block := s.reserve(c.n)
			if (block != nil) != c.wantBlock {
				t.Fatalf("reserve(%d) after %d adds: block of %d, want a block: %v", c.n, c.before, len(block), c.wantBlock)
			}
			chunks := len(s.chunks)
			for range c.n {
				add()
				if p := ptrs[len(ptrs)-1]; block != nil && len(ptrs) > chunkRoom(c.before) && !inSlice(block, p) {
					t.Fatalf("slot %d is outside the reserved block", len(ptrs)-1)
				}
			}
			if len(s.chunks) != chunks {
				t.Fatalf("%d reserved adds made %d new chunks", c.n, len(s.chunks)-chunks)
			}
			for range c.after {
				add()
			}
			for i, p := range ptrs {
				if s.at(int32(i)) != p || p.ev != &evs[i] || p.seq != uint64(i) {
					t.Fatalf("slot %d moved or changed", i)
				}
			}
		})
	}
}

// TestAllocStoreEvent: the room for event copies comes in chunks of
// allocChunk slots, one per chunk of slots, made on first use: slots of one
// chunk share it, a slot in a later chunk makes only that chunk, and every
// slot has a room of its own that keeps what was written to it.
func TestAllocStoreEvent(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		slots        []int32
		wantChunks   int   // len(s.events) afterwards
		made         []int // the chunks made
	}{
		{"first slot", "slot 0 makes chunk 0", []int32{0}, 1, []int{0}},
		{"one chunk", "slots 0, 1 and 100 share chunk 0: no chunk per slot", []int32{0, 1, 100}, 1, []int{0}},
		{"a later chunk only", "slot allocChunk+5 makes chunk 1; chunk 0 is left unmade",
			[]int32{allocChunk + 5}, 2, []int{1}},
		{"both ends of two chunks", "the last slot of chunk 0 and the first of chunk 1",
			[]int32{allocChunk - 1, allocChunk, 0}, 2, []int{0, 1}},
	} {
		var s allocStore
		for _, i := range c.slots {
			s.event(i).TensorID = fmt.Sprint(i)
			if len(s.events) > c.wantChunks {
				t.Fatalf("%s (%s): after event(%d), %d chunks of event room; want %d", c.name, c.reason, i, len(s.events), c.wantChunks)
			}
		}
		if len(s.events) != c.wantChunks {
			t.Fatalf("%s (%s): %d chunks of event room; want %d", c.name, c.reason, len(s.events), c.wantChunks)
		}
		made := []int{}
		for k, ch := range s.events {
			if ch != nil {
				made = append(made, k)
				if len(ch) != allocChunk {
					t.Fatalf("%s: chunk %d holds %d slots; want %d", c.name, k, len(ch), allocChunk)
				}
			}
		}
		if fmt.Sprint(made) != fmt.Sprint(c.made) {
			t.Fatalf("%s (%s): chunks made %v; want %v", c.name, c.reason, made, c.made)
		}
		for _, i := range c.slots {
			if got := s.event(i).TensorID; got != fmt.Sprint(i) {
				t.Fatalf("%s: the room of slot %d holds %q; want %q", c.name, i, got, fmt.Sprint(i))
			}
		}
	}
}

// TestLiveTableSpreads: ids land near their home cells, so that a lookup
// probes a few cells, not a run as long as the table. A home that sent
// every key to one cell (a wrong shift or multiplier in home) still finds
// every id, and TestLiveTableMatchesMap passes it, but makes each insert
// and lookup linear in the live tensors: the replay quadratic.
func TestLiveTableSpreads(t *testing.T) {
	const n = 1 << 14
	var (
		store allocStore
		tab   liveTable
		evs   = make([]MemoryEvent, n)
	)
	for i := range evs {
		evs[i].TensorID = fmt.Sprintf("t%d", i)
		tab.insert(store.add(liveAlloc{ev: &evs[i]}), hashID(evs[i].TensorID))
	}
	mask := len(tab.cells) - 1
	total, longest := 0, 0
	for i, c := range tab.cells {
		if c.slot == 0 {
			continue
		}
		d := (i - tab.home(c.key)) & mask // cells probed past the home cell
		total += d
		longest = max(longest, d)
	}
	// Linear probing at most half full displaces a key by half a cell on
	// average; runs of a hundred cells mean the keys do not spread.
	if mean := float64(total) / n; mean > 2 || longest > 100 {
		t.Errorf("%d ids in %d cells: %.2f cells past home on average, %d at most; want at most 2 and 100", n, len(tab.cells), mean, longest)
	}
}

// chunkRoom is the slots in the chunks made by n adds.
func chunkRoom(n int) int { return (n + allocChunk - 1) / allocChunk * allocChunk }

func inSlice(s []liveAlloc, p *liveAlloc) bool {
	lo, hi := uintptr(unsafe.Pointer(&s[0])), uintptr(unsafe.Pointer(&s[len(s)-1]))
	return lo <= uintptr(unsafe.Pointer(p)) && uintptr(unsafe.Pointer(p)) <= hi
}

// TestHashIDIsFNV1a: hashID is 64-bit FNV-1a, as its doc says (checked
// against hash/fnv), so hashes are the same in every run and process.
func TestHashIDIsFNV1a(t *testing.T) {
	for _, tc := range []struct{ name, reason, id string }{
		{"empty", "the offset basis alone", ""},
		{"one byte", "FNV-1a XORs the byte before multiplying; FNV-1 after", "a"},
		{"tensor id", "a typical id", "cuda:0@0x7f0000001000#3"},
		{"high bytes", "bytes above 0x7f and NUL", "\x00\xff\x80t"},
	} {
		h := fnv.New64a()
		h.Write([]byte(tc.id))
		if got, want := hashID(tc.id), h.Sum64(); got != want {
			t.Errorf("%s (%s): hashID(%q) = %#x, want %#x", tc.name, tc.reason, tc.id, got, want)
		}
	}
}
