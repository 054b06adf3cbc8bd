// chrome.go reads PyTorch profiler traces (Chrome trace JSON with memory events).

package tracemem

import (
	"errors"
	"io"
)

// ReadChromeTrace reads a PyTorch profiler trace.
func ReadChromeTrace(r io.Reader) (*TraceDocument, error) {
	return nil, errors.New("tracemem: chrome traces: not implemented yet")
}
