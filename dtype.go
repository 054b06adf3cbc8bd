// dtype.go holds element sizes of dtype labels and the dense storage size of a tensor.

package tracemem

import (
	"math/bits"
	"strings"
)

// DTypeBits returns the size in bits of one element of the dtype with the
// given label, and false for a label it does not know. Labels are matched
// case-insensitively after trimming white space and an optional "torch."
// prefix; the short Candle forms (f32, bf16, u8, ...) and the long forms of
// other frameworks (float32, bfloat16, int64, half, double, ...) are known,
// and so are the low-precision floats of Candle and safetensors (f8e4m3,
// f8e8m0, F8_E5M2, ...), XLA's names (s8, pred, f8e4m3fn, ...), and sub-byte
// types, in bits (f6e2m3, f4, i4, int4, float4_e2m1fn, PyTorch's uint1 to
// uint7 and int1 to int7, ...). Labels count bits, as Candle's do: f4 is a
// 4-bit float, not NumPy's 4-byte one.
func DTypeBits(label string) (uint64, bool) {
	s := strings.TrimSpace(label)
	var buf [32]byte
	if len(s) > len(buf) {
		return 0, false
	}
	lower := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	if len(lower) > 6 && string(lower[:6]) == "torch." {
		lower = lower[6:]
	}
	switch string(lower) {
	case "bool", "u8", "i8", "uint8", "int8", "byte", "char", "pred", "s8",
		"f8", "f8e4m3", "f8e5m2", "f8e8m0", "f8e4m3fnuz", "f8e5m2fnuz", "f8e6m2",
		"fp8", "float8", "float8_e4m3fn", "float8_e4m3fnuz",
		"float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "qint8", "quint8",
		// safetensors' spellings
		"f8_e4m3", "f8_e5m2", "f8_e8m0",
		// XLA's and ml_dtypes'
		"f8e4m3fn", "f8e4m3b11fnuz", "f8e3m4", "f8e8m0fnu", "float8_e3m4", "float8_e4m3",
		"float8_e4m3b11fnuz",
		// PyTorch's packed types: an element is a byte holding two or four values.
		"float4_e2m1fn_x2", "quint4x2", "quint2x4":
		return 8, true
	case "u16", "i16", "s16", "f16", "bf16", "uint16", "int16", "short", "float16", "half",
		"bfloat16", "fp16":
		return 16, true
	case "u32", "i32", "s32", "f32", "uint32", "int32", "int", "float32", "float", "fp32",
		"tf32", "qint32", "complex32", "chalf", "c32":
		return 32, true
	case "u64", "i64", "s64", "f64", "uint64", "int64", "long", "float64", "double", "fp64",
		"complex64", "cfloat", "c64":
		return 64, true
	case "complex128", "cdouble", "c128":
		return 128, true
	case "int7", "uint7":
		return 7, true
	case "f6e2m3", "f6e3m2", "f6_e2m3", "f6_e3m2", "fp6", "f6e2m3fn", "f6e3m2fn",
		"float6_e2m3fn", "float6_e3m2fn", "int6", "uint6":
		return 6, true
	case "int5", "uint5":
		return 5, true
	case "f4", "i4", "u4", "s4", "fp4", "int4", "uint4", "float4", "float4_e2m1fn", "f4e2m1",
		"f4e2m1fn":
		return 4, true
	case "int3", "uint3":
		return 3, true
	case "i2", "u2", "s2", "int2", "uint2":
		return 2, true
	case "i1", "u1", "s1", "int1", "uint1", "bit":
		return 1, true
	}
	return 0, false
}

// DTypeSize returns the size in bytes of one element, rounded up to a whole
// byte for sub-byte types, and false for an unknown label.
func DTypeSize(label string) (uint64, bool) {
	b, ok := DTypeBits(label)
	return (b + 7) / 8, ok
}

// ElementCount returns the number of elements of a tensor of the given shape.
// The empty shape (a scalar) has one element; a zero dimension gives 0. The
// product saturates at the maximum uint64; it never wraps.
func ElementCount(shape []uint64) uint64 {
	n := uint64(1)
	saturated := false
	for _, d := range shape {
		if d == 0 {
			return 0
		}
		hi, lo := bits.Mul64(n, d)
		if hi != 0 {
			saturated = true
			continue
		}
		n = lo
	}
	if saturated {
		return ^uint64(0)
	}
	return n
}

// DenseBytes returns the dense storage size in bytes of a tensor of the given
// shape and dtype: element count × element size, with sub-byte types counted
// in bits and rounded up to whole bytes for the tensor. It is 0 for an unknown
// dtype and saturates at the maximum uint64.
func DenseBytes(shape []uint64, dtype string) uint64 {
	b, ok := DTypeBits(dtype)
	if !ok {
		return 0
	}
	// total bits as the 128-bit number hi:lo; saturate once the bytes
	// (bits/8, rounded up) cannot fit in 64 bits, i.e. hi >= 8.
	hi, lo := uint64(0), b
	saturated := false
	for _, d := range shape {
		if d == 0 {
			return 0
		}
		if saturated {
			continue
		}
		h1, l1 := bits.Mul64(lo, d)
		h2, l2 := bits.Mul64(hi, d)
		sum, carry := bits.Add64(h1, l2, 0)
		if h2 != 0 || carry != 0 || sum >= 8 {
			saturated = true
			continue
		}
		hi, lo = sum, l1
	}
	if saturated {
		return ^uint64(0)
	}
	n := hi<<61 | lo>>3
	if lo&7 != 0 {
		n = addSat(n, 1)
	}
	return n
}

// ResolveBytes returns *explicit when it is set and the dense size derived
// from shape and dtype otherwise.
func ResolveBytes(explicit *uint64, shape []uint64, dtype string) uint64 {
	if explicit != nil {
		return *explicit
	}
	return DenseBytes(shape, dtype)
}
