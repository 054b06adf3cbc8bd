// Package prefetch asks the processor to bring a cache line in ahead of
// its use, where Go has no way to say so.
package prefetch

import "unsafe"

// Line starts fetching the cache line that holds p, without waiting for it
// and without faulting. On architectures without an implementation it does
// nothing.
func Line(p unsafe.Pointer) { line(p) }
