// live.go holds the live allocations of a replay and the table that finds one by tensor id.

package tracemem

import (
	"math/bits"
	"unsafe"

	"github.com/tracemem/tracemem/internal/prefetch"
)

// allocStore holds the live-allocation slots in fixed-size chunks, so that
// growing it never copies the allocations already made and pointers into it
// stay valid. Beside each slot it has room for a copy of the alloc event,
// used when the caller's event may change after Add (see Analyzer.add).
type allocStore struct {
	chunks [][]liveAlloc
	events [][]MemoryEvent // copies of alloc events, by slot; chunks made on first use
	n      int             // slots handed out
}

const allocChunk = 4096

func (s *allocStore) at(i int32) *liveAlloc { return &s.chunks[i/allocChunk][i%allocChunk] }

// event returns the room for a copy of slot i's alloc event.
func (s *allocStore) event(i int32) *MemoryEvent {
	c := int(i / allocChunk)
	for len(s.events) <= c {
		s.events = append(s.events, nil)
	}
	if s.events[c] == nil {
		s.events[c] = make([]MemoryEvent, allocChunk)
	}
	return &s.events[c][i%allocChunk]
}

// reserve makes room for the next n slots: what the chunks made so far
// lack, it makes as chunks of one block, which it returns (nil when none
// is needed) so that the caller can have its memory mapped in ahead.
func (s *allocStore) reserve(n int) []liveAlloc {
	have := len(s.chunks)*allocChunk - s.n
	if n <= have {
		return nil
	}
	k := (n - have + allocChunk - 1) / allocChunk
	block := make([]liveAlloc, k*allocChunk)
	for i := range k {
		s.chunks = append(s.chunks, block[i*allocChunk:(i+1)*allocChunk:(i+1)*allocChunk])
	}
	return block
}

func (s *allocStore) add(al liveAlloc) int32 {
	if s.n == len(s.chunks)*allocChunk {
		s.chunks = append(s.chunks, make([]liveAlloc, allocChunk))
	}
	i := s.n
	s.chunks[i/allocChunk][i%allocChunk] = al
	s.n++
	return int32(i)
}

// liveAlloc is a live allocation; a slot not in use has a nil ev.
type liveAlloc struct {
	ev   *MemoryEvent // the alloc event: the caller's own, or a copy in allocStore
	seq  uint64       // replay index of the alloc event
	dev  int32
	span int32 // -1: no known span
}

// liveTable finds the slot of a live tensor by id: open addressing with
// linear probing, at most half full. A cell holds 32 bits of the id's hash
// beside the slot, so that a probe past another id rarely reads its slot,
// and a lookup of an id not live (every alloc does one) touches only the
// table. A map[uint64]int32 did the same with twice the memory and a cache
// miss more per lookup once a million tensors were live.
type liveTable struct {
	cells []liveCell // a power of two long; nil until the first insert
	shift uint8      // 64 − log2(len(cells)), for home
	n     int        // cells in use
}

type liveCell struct {
	key  uint32 // the id's hash, masked by liveKeyMask, truncated
	slot int32  // the allocation's slot + 1; 0 for an empty cell
}

// reserve sizes the table for n live tensors.
func (t *liveTable) reserve(n int) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	if size > len(t.cells) {
		t.resize(size)
	}
}

func (t *liveTable) resize(size int) {
	old := t.cells
	t.cells = make([]liveCell, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	for _, c := range old {
		if c.slot != 0 {
			i := t.home(c.key)
			for t.cells[i].slot != 0 {
				i = (i + 1) & (len(t.cells) - 1)
			}
			t.cells[i] = c
		}
	}
}

// home is the first cell probed for key: Fibonacci hashing, so that ids
// whose hashes differ only in their high bits still spread.
func (t *liveTable) home(key uint32) int {
	return int(uint64(key) * 0x9E3779B97F4A7C15 >> t.shift)
}

// prefetch starts fetching the cell where a lookup of hash h starts, so that
// it is in the cache when the lookup comes (see replayDocument).
func (t *liveTable) prefetch(h uint64) {
	if len(t.cells) > 0 {
		prefetch.Line(unsafe.Pointer(&t.cells[t.home(tableKey(h))]))
	}
}

func tableKey(h uint64) uint32 { return uint32(h & liveKeyMask) }

// find returns the slot of the live tensor id, whose hash is h, or -1.
func (t *liveTable) find(s *allocStore, id string, h uint64) int32 {
	if t.n == 0 {
		return -1
	}
	key := tableKey(h)
	for i := t.home(key); ; i = (i + 1) & (len(t.cells) - 1) {
		c := t.cells[i]
		if c.slot == 0 {
			return -1
		}
		if c.key == key && s.at(c.slot-1).ev.TensorID == id {
			return c.slot - 1
		}
	}
}

// insert adds slot, holding a tensor of hash h not live before.
func (t *liveTable) insert(slot int32, h uint64) {
	if 2*(t.n+1) > len(t.cells) {
		t.resize(max(16, 2*len(t.cells)))
	}
	key := tableKey(h)
	i := t.home(key)
	for t.cells[i].slot != 0 {
		i = (i + 1) & (len(t.cells) - 1)
	}
	t.cells[i] = liveCell{key: key, slot: slot + 1}
	t.n++
}

// remove takes out slot, holding a tensor of hash h. The cells after it in
// its run move back where their probe would find them (no tombstones, so a
// long trace does not fill the table with them).
func (t *liveTable) remove(slot int32, h uint64) {
	mask := len(t.cells) - 1
	i := t.home(tableKey(h))
	for t.cells[i].slot != slot+1 {
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.cells[j].slot != 0; j = (j + 1) & mask {
		// The cell at j may fill the hole at i unless its home lies
		// cyclically in (i, j].
		k := t.home(t.cells[j].key)
		if i <= j && (k <= i || k > j) || i > j && k <= i && k > j {
			t.cells[i] = t.cells[j]
			i = j
		}
	}
	t.cells[i] = liveCell{}
	t.n--
}

// liveKeyMask selects the bits of an id's hash that key the live table;
// tests clear bits to make ids share keys, so that probes must compare ids.
var liveKeyMask = ^uint64(0)

// hashID is FNV-1a, 64 bits: deterministic across runs and processes.
func hashID(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}
