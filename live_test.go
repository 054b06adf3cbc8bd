package tracemem

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
