//go:build !linux

package prefault

import "errors"

func populate([]byte) error { return errors.ErrUnsupported }

func adviseHuge([][]byte) (undo func()) { return func() {} }
