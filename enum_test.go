// enum_test.go holds the tests of the typed enumerations and their text forms.

package tracemem

import (
	stdjson "encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

type textEnum interface {
	String() string
	MarshalText() ([]byte, error)
}

func TestEnumText(t *testing.T) {
	tests := []struct {
		name    string
		values  []textEnum
		names   []string
		parse   func([]byte) (textEnum, error)
		bad     textEnum // out of range
		wantErr string   // error text for the unknown value "bogus"
	}{
		{"action", []textEnum{ActionAlloc, ActionFree}, []string{"alloc", "free"},
			func(b []byte) (textEnum, error) { var v MemoryAction; err := v.UnmarshalText(b); return v, err },
			MemoryAction(2), `unknown action "bogus" (want alloc or free)`},
		{"phase", []textEnum{PhaseTrain, PhaseInfer}, []string{"train", "infer"},
			func(b []byte) (textEnum, error) { var v Phase; err := v.UnmarshalText(b); return v, err },
			Phase(2), `unknown phase "bogus" (want train or infer)`},
		{"timing", []textEnum{TimingHost, TimingDeviceSynchronized}, []string{"host", "device_synchronized"},
			func(b []byte) (textEnum, error) { var v TimingMode; err := v.UnmarshalText(b); return v, err },
			TimingMode(2), `unknown timing_mode "bogus" (want host or device_synchronized)`},
		{"span kind", []textEnum{SpanFunction, SpanOp, SpanModule}, []string{"function", "op", "module"},
			func(b []byte) (textEnum, error) { var v SpanKind; err := v.UnmarshalText(b); return v, err },
			SpanKind(3), `unknown span_kind "bogus" (want function, op or module)`},
		{"step", []textEnum{StepForward, StepBackward, StepOptimizer}, []string{"forward", "backward", "optimizer"},
			func(b []byte) (textEnum, error) { var v Step; err := v.UnmarshalText(b); return v, err },
			Step(4), `unknown step "bogus" (want forward, backward or optimizer)`},
		{"gradient state", []textEnum{GradientPresent, GradientMissing, GradientZero, GradientNonFinite},
			[]string{"present", "missing", "zero", "non_finite"},
			func(b []byte) (textEnum, error) { var v GradientState; err := v.UnmarshalText(b); return v, err },
			GradientState(4), `unknown state "bogus" (want present, missing, zero or non_finite)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, v := range tc.values {
				b, err := v.MarshalText()
				if err != nil || string(b) != tc.names[i] || v.String() != tc.names[i] {
					t.Errorf("%v: MarshalText %q, %v; String %q; want %q", v, b, err, v.String(), tc.names[i])
				}
				back, err := tc.parse([]byte(tc.names[i]))
				if err != nil || back != v {
					t.Errorf("UnmarshalText(%q) = %v, %v; want %v", tc.names[i], back, err, v)
				}
			}
			_, err := tc.parse([]byte("bogus"))
			var ee *EnumError
			if !errors.As(err, &ee) || err.Error() != tc.wantErr || ee.Value != "bogus" || len(ee.Allowed) != len(tc.names) {
				t.Errorf("unknown value: error %v, want %q", err, tc.wantErr)
			}
			if _, err := tc.parse([]byte(tc.names[0] + " ")); err == nil {
				t.Error("a name with a trailing space was accepted (names are exact)")
			}
			// Names are exact in case too (from a test audit: the
			// reference reader shared UnmarshalText, so a case-blind
			// match went unseen).
			for _, name := range tc.names {
				for _, other := range []string{strings.ToUpper(name), strings.ToUpper(name[:1]) + name[1:]} {
					if _, err := tc.parse([]byte(other)); err == nil {
						t.Errorf("%q was accepted for %q (names are exact, in case too)", other, name)
					}
				}
			}
			if _, err := tc.parse([]byte("x")); err == nil {
				t.Error(`a name of one character, "x", was accepted (from a mutation test: only "" may stand for a value)`)
			}
			if _, err := tc.bad.MarshalText(); err == nil {
				t.Errorf("MarshalText of out-of-range %v did not fail", tc.bad)
			}
		})
	}
}

func TestStepNone(t *testing.T) {
	if StepNone != 0 || !StepNone.IsZero() || StepForward.IsZero() || StepNone.String() != "none" {
		t.Error("StepNone is not the zero, absent step")
	}
	if b, err := StepNone.MarshalText(); err != nil || len(b) != 0 {
		t.Errorf("StepNone.MarshalText = %q, %v", b, err)
	}
	s := StepBackward
	if err := s.UnmarshalText(nil); err != nil || s != StepNone {
		t.Errorf(`UnmarshalText("") = %v, %v`, s, err)
	}
	// omitzero leaves an absent step out of the document form, with encoding/json too
	data, err := stdjson.Marshal(Span{ID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := stdjson.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["step"]; ok {
		t.Errorf("absent step written: %s", data)
	}
	if _, ok := m["parent_id"]; ok {
		t.Errorf("absent parent_id written: %s", data)
	}
}

// TestEnumStringOutOfRange: String of a value past the last name names the
// type and the number (as fmt shows it), instead of a name or a panic.
func TestEnumStringOutOfRange(t *testing.T) {
	tests := []struct {
		name   string
		value  fmt.Stringer
		want   string
		reason string
	}{
		{"action", MemoryAction(2), "MemoryAction(2)", "the first value past free"},
		{"action max", MemoryAction(255), "MemoryAction(255)", "the largest value"},
		{"phase", Phase(2), "Phase(2)", "the first value past infer"},
		{"timing", TimingMode(2), "TimingMode(2)", "the first value past device_synchronized"},
		{"span kind", SpanKind(3), "SpanKind(3)", "the first value past module"},
		{"step", Step(4), "Step(4)", "the first value past optimizer"},
		{"gradient state", GradientState(4), "GradientState(4)", "the first value past non_finite"},
		{"category", Category(NumCategories), "Category(5)", "the first value past optimizer"},
	}
	for _, tc := range tests {
		if got := tc.value.String(); got != tc.want {
			t.Errorf("%s: String() = %q, want %q (%s)", tc.name, got, tc.want, tc.reason)
		}
	}
}

// TestEnumErrorText: an *EnumError lists its allowed names as "a", "a or b",
// "a, b or c", whatever their number.
func TestEnumErrorText(t *testing.T) {
	tests := []struct {
		name    string
		allowed []string
		want    string
		reason  string
	}{
		{"none", nil, `unknown x "v" (want nothing)`, "no name is allowed"},
		{"one", []string{"a"}, `unknown x "v" (want a)`, "a single name stands alone"},
		{"two", []string{"a", "b"}, `unknown x "v" (want a or b)`, "two names are joined by or"},
		{"three", []string{"a", "b", "c"}, `unknown x "v" (want a, b or c)`, "commas, then or before the last"},
	}
	for _, tc := range tests {
		if got := (&EnumError{Type: "x", Value: "v", Allowed: tc.allowed}).Error(); got != tc.want {
			t.Errorf("%s: Error() = %q, want %q (%s)", tc.name, got, tc.want, tc.reason)
		}
	}

	// Long values are quoted up to 64 bytes, cut between characters, with
	// their length (from a review: a 2 MB action made a 2 MB error line).
	a64, a65 := strings.Repeat("a", 64), strings.Repeat("a", 65)
	for _, tc := range []struct {
		name, value, want, reason string
	}{
		{"64", a64, `unknown x "` + a64 + `" (want a)`, "64 bytes are quoted whole"},
		{"65", a65, `unknown x "` + a64 + `"... (65 bytes; want a)`, "from 65 bytes on, the first 64 and the length"},
		{"2MB", strings.Repeat("a", 2<<20), `unknown x "` + a64 + `"... (2097152 bytes; want a)`, "a value of megabytes, likewise"},
		{"rune", strings.Repeat("a", 63) + "é" + "zz", `unknown x "` + strings.Repeat("a", 63) + `"... (67 bytes; want a)`, "a character across byte 64 is not cut in two"},
		{"rune fits", strings.Repeat("a", 62) + "éz", `unknown x "` + strings.Repeat("a", 62) + `é"... (65 bytes; want a)`, "a character that ends at byte 64 stays"},
	} {
		err := &EnumError{Type: "x", Value: tc.value, Allowed: []string{"a"}}
		if got := err.Error(); got != tc.want {
			t.Errorf("%s: Error() = %q, want %q (%s)", tc.name, got, tc.want, tc.reason)
		}
		if err.Value != tc.value {
			t.Errorf("%s: Value changed", tc.name)
		}
	}
}
