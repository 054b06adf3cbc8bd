// enum.go holds the typed enumerations of the trace model and their text forms.

package tracemem

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// EnumError reports a text value that is not one of an enumeration's names.
type EnumError struct {
	Type    string   // the field or type, e.g. "action"
	Value   string   // the text that was given
	Allowed []string // the accepted names
}

// Error renders e.g. `unknown action "alocate" (want alloc or free)`. A
// value longer than 64 bytes (enumQuoteMax) is quoted up to there, cut
// between characters, with its length: `unknown action "aaaa"... (2000000
// bytes; want alloc or free)` (Value keeps it whole), so that one bad field
// does not make an error line of megabytes.
func (e *EnumError) Error() string {
	if len(e.Value) <= enumQuoteMax {
		return fmt.Sprintf("unknown %s %q (want %s)", e.Type, e.Value, orList(e.Allowed))
	}
	n := enumQuoteMax
	for n > enumQuoteMax-(utf8.UTFMax-1) && !utf8.RuneStart(e.Value[n]) {
		n--
	}
	return fmt.Sprintf("unknown %s %q... (%d bytes; want %s)", e.Type, e.Value[:n], len(e.Value), orList(e.Allowed))
}

// enumQuoteMax is the most bytes of a value an EnumError quotes.
const enumQuoteMax = 64

// orList renders names as `a, b or c`.
func orList(names []string) string {
	switch len(names) {
	case 0:
		return "nothing"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// parseEnum returns the index of s in names; empty names are placeholders that
// never match.
func parseEnum(what string, names []string, s []byte) (int, error) {
	for i, n := range names {
		if n != "" && n == string(s) {
			return i, nil
		}
	}
	allowed := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" {
			allowed = append(allowed, n)
		}
	}
	return 0, &EnumError{Type: what, Value: string(s), Allowed: allowed}
}

func enumString(names []string, i int, typ string) string {
	if i >= 0 && i < len(names) && names[i] != "" {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

func enumText(names []string, i int, typ string) ([]byte, error) {
	if i >= 0 && i < len(names) && names[i] != "" {
		return []byte(names[i]), nil
	}
	return nil, fmt.Errorf("tracemem: invalid %s %d", typ, i)
}

// MemoryAction says whether a memory event allocates or frees. The zero
// value is ActionAlloc, so a MemoryEvent built without an Action allocates.
type MemoryAction uint8

const (
	ActionAlloc MemoryAction = iota // "alloc"
	ActionFree                      // "free"
)

var actionNames = []string{"alloc", "free"}

// valid reports whether a is one of the actions above.
func (a MemoryAction) valid() bool { return a <= ActionFree }

// String returns the action's JSON name, or "MemoryAction(n)" out of range.
func (a MemoryAction) String() string { return enumString(actionNames, int(a), "MemoryAction") }

// MarshalText implements encoding.TextMarshaler.
func (a MemoryAction) MarshalText() ([]byte, error) {
	return enumText(actionNames, int(a), "MemoryAction")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (a *MemoryAction) UnmarshalText(b []byte) error {
	i, err := parseEnum("action", actionNames, b)
	*a = MemoryAction(i)
	return err
}

// Phase is what the traced run did: train or infer. The zero value is
// PhaseTrain.
type Phase uint8

const (
	PhaseTrain Phase = iota // "train"
	PhaseInfer              // "infer"
)

var phaseNames = []string{"train", "infer"}

// String returns the phase's JSON name, or "Phase(n)" out of range.
func (p Phase) String() string { return enumString(phaseNames, int(p), "Phase") }

// MarshalText implements encoding.TextMarshaler.
func (p Phase) MarshalText() ([]byte, error) { return enumText(phaseNames, int(p), "Phase") }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Phase) UnmarshalText(b []byte) error {
	i, err := parseEnum("phase", phaseNames, b)
	*p = Phase(i)
	return err
}

// TimingMode says how span durations were measured. The zero value is
// TimingHost.
type TimingMode uint8

const (
	TimingHost               TimingMode = iota // "host": host wall clock
	TimingDeviceSynchronized                   // "device_synchronized": host clock after a device sync
)

var timingModeNames = []string{"host", "device_synchronized"}

// String returns the mode's JSON name, or "TimingMode(n)" out of range.
func (m TimingMode) String() string { return enumString(timingModeNames, int(m), "TimingMode") }

// MarshalText implements encoding.TextMarshaler.
func (m TimingMode) MarshalText() ([]byte, error) {
	return enumText(timingModeNames, int(m), "TimingMode")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *TimingMode) UnmarshalText(b []byte) error {
	i, err := parseEnum("timing_mode", timingModeNames, b)
	*m = TimingMode(i)
	return err
}

// SpanKind classifies a span of the call tree. The zero value is
// SpanFunction.
type SpanKind uint8

const (
	SpanFunction SpanKind = iota // "function"
	SpanOp                       // "op"
	SpanModule                   // "module"
)

var spanKindNames = []string{"function", "op", "module"}

// String returns the kind's JSON name, or "SpanKind(n)" out of range.
func (k SpanKind) String() string { return enumString(spanKindNames, int(k), "SpanKind") }

// MarshalText implements encoding.TextMarshaler.
func (k SpanKind) MarshalText() ([]byte, error) { return enumText(spanKindNames, int(k), "SpanKind") }

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *SpanKind) UnmarshalText(b []byte) error {
	i, err := parseEnum("span_kind", spanKindNames, b)
	*k = SpanKind(i)
	return err
}

// Step is the training step a span belongs to. StepNone (the zero value)
// means the span does not say; it is absent in JSON.
type Step uint8

const (
	StepNone      Step = iota // absent
	StepForward               // "forward"
	StepBackward              // "backward"
	StepOptimizer             // "optimizer"
)

var stepNames = []string{"", "forward", "backward", "optimizer"}

// String returns the step's JSON name, "none" for StepNone (which
// marshals as ""), or "Step(n)" out of range.
func (s Step) String() string {
	if s == StepNone {
		return "none"
	}
	return enumString(stepNames, int(s), "Step")
}

// IsZero reports whether the step is absent (for omitzero).
func (s Step) IsZero() bool { return s == StepNone }

// MarshalText implements encoding.TextMarshaler. StepNone marshals as "".
func (s Step) MarshalText() ([]byte, error) {
	if s == StepNone {
		return []byte{}, nil
	}
	return enumText(stepNames, int(s), "Step")
}

// UnmarshalText implements encoding.TextUnmarshaler; "" is StepNone.
func (s *Step) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*s = StepNone
		return nil
	}
	i, err := parseEnum("step", stepNames, b)
	*s = Step(i)
	return err
}

// GradientState is what a gradient fact found for a parameter. The zero
// value is GradientPresent.
type GradientState uint8

const (
	GradientPresent   GradientState = iota // "present"
	GradientMissing                        // "missing"
	GradientZero                           // "zero"
	GradientNonFinite                      // "non_finite"
)

var gradientStateNames = []string{"present", "missing", "zero", "non_finite"}

// String returns the state's JSON name, or "GradientState(n)" out of range.
func (s GradientState) String() string {
	return enumString(gradientStateNames, int(s), "GradientState")
}

// MarshalText implements encoding.TextMarshaler.
func (s GradientState) MarshalText() ([]byte, error) {
	return enumText(gradientStateNames, int(s), "GradientState")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *GradientState) UnmarshalText(b []byte) error {
	i, err := parseEnum("state", gradientStateNames, b)
	*s = GradientState(i)
	return err
}
