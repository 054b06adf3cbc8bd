// docjson.go holds the streaming decoder of the document form (one JSON object) with byte-offset errors.

package tracemem

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// docSections maps a document's array sections to their record kinds.
var docSections = map[string]recordKind{
	"spans":         recSpanStart,
	"ops":           recOp,
	"tensors":       recTensor,
	"memory":        recMemory,
	"device_memory": recDeviceMemory,
	"gradients":     recGradient,
	"edges":         recEdge,
}

// docDecoder reads the document form with one pass over a token stream:
// each element of a section is read as one validated value and parsed by
// the same field parsers as the JSONL records, so both forms follow the same
// rules (the document's spans carry kind, closed and duration_ns). Errors
// name the byte offset of the value at fault.
type docDecoder struct {
	dec     *jsontext.Decoder
	in      *readErrs
	p       valueParser
	f       recordFields
	members []member
	alts    [][]byte
	broken  bool // the token stream failed (see syntax)

	sections
}

// readDocument reads the document form from r.
func readDocument(r io.Reader) (*TraceDocument, error) {
	in := &readErrs{r: r}
	// Names given twice are found by the checks the JSONL form shares: the
	// document's own keys below, an element's fields and tags by the record
	// parser. Inside ignored values they are ignored, as in JSONL.
	dec := jsontext.NewDecoder(in, jsontext.AllowDuplicateNames(true))
	d := &docDecoder{dec: dec, in: in, p: valueParser{in: newInterner()}}
	defer d.release()
	doc := &TraceDocument{}
	tok, err := d.dec.ReadToken()
	if err != nil {
		return nil, d.syntax(err)
	}
	if tok.Kind() != '{' {
		return nil, &ParseError{Offset: d.dec.InputOffset() - 1, Msg: "want a JSON object"}
	}
	var sawSchema, sawRun bool
	// Span ids are checked by a map, not by sorting keys at the end as the
	// JSONL form does: the spans are sorted in place, and the keys and a
	// copy of the spans cost 40 MB more on the 1M-event document, for no
	// time saved next to the token stream's.
	spanAt := make(map[string]int64)
	keys := make(map[string]bool)
	for d.dec.PeekKind() == '"' {
		at := nextOffset(d.dec)
		nameTok, err := d.dec.ReadToken()
		if err != nil {
			return nil, d.syntax(err)
		}
		name := nameTok.String()
		if keys[name] {
			return nil, &ParseError{Offset: at, Field: name, Msg: "duplicate field", Err: ErrInvalidJSON}
		}
		keys[name] = true
		switch name {
		case "schema":
			s, err := d.schema()
			if err != nil {
				return nil, err
			}
			doc.Schema, sawSchema = s, true
		case "run":
			v, start, err := d.value()
			if err != nil {
				return nil, inSection(err, "run")
			}
			if v[0] != '{' {
				perr := typeError("", "an object", v)
				perr.Kind, perr.Offset = "run", start
				return nil, d.schemaAfter(perr, sawSchema)
			}
			if err := d.element(recMeta, "run", v, start); err != nil {
				return nil, d.schemaAfter(err, sawSchema)
			}
			doc.Run, sawRun = d.f.run, true
		default:
			k, ok := docSections[name]
			if !ok {
				if err := d.dec.SkipValue(); err != nil { // unknown keys are ignored
					return nil, d.syntax(err)
				}
				continue
			}
			if err := d.section(name, k, spanAt); err != nil {
				return nil, d.schemaAfter(inSection(err, name), sawSchema)
			}
		}
	}
	if _, err := d.dec.ReadToken(); err != nil { // '}'
		return nil, d.syntax(err)
	}
	d.dec.PeekKind() // reads past the white space, however long, to what follows
	next := nextOffset(d.dec)
	if _, err := d.dec.ReadValue(); err != io.EOF {
		// Two JSON texts are not one, and neither is a JSON text and
		// something else.
		msg := "more data after the document"
		var se *jsontext.SyntacticError
		switch {
		case d.in.failed(err):
			return nil, d.syntax(err)
		case errors.As(err, &se) && !errors.Is(err, io.ErrUnexpectedEOF) && se.Err != nil:
			// The reason alone: the decoder's JSON pointer and offset
			// are those of a second value, not of the document.
			msg += ": " + se.Err.Error()
		}
		return nil, &ParseError{Offset: next, Msg: msg, Err: ErrInvalidJSON}
	}
	switch {
	case !sawSchema:
		return nil, &ParseError{Offset: 0, Field: "schema", Msg: "missing required field"}
	case !sawRun:
		return nil, &ParseError{Offset: 0, Field: "run", Msg: "missing required field"}
	}
	doc.Spans = d.spans.slice()
	d.into(doc)
	sortSpans(doc.Spans)
	return doc, nil
}

// inSection names the section in an error of its token stream (a syntax
// error, input cut short, a failed read), as the errors of its elements do.
func inSection(err error, name string) error {
	if perr, ok := err.(*ParseError); ok && perr.Kind == "" {
		perr.Kind = name
	}
	return err
}

// schema reads the document's schema, the value of its "schema" member: an
// error for one this package does not read.
func (d *docDecoder) schema() (string, error) {
	v, start, err := d.value()
	if err != nil {
		return "", err
	}
	d.p.esc = true // the value may have escapes: decode them
	s, perr := d.p.str("schema", v)
	if perr == nil && s != SchemaV6 && s != SchemaV7 {
		perr = schemaError(s)
	}
	if perr != nil {
		perr.Offset = start
		return "", perr
	}
	return s, nil
}

// schemaAfter returns err, the error of a value in the document, or the
// error of the schema when the document gives one this package does not
// read after that value (sawSchema false): a document of another schema may
// differ anywhere, and callers test for ErrUnsupportedSchema, as in the
// JSONL form, whose meta record comes first. It reads on to the schema, past
// the rest of the section it is in; when the token stream fails (invalid
// JSON, a failed read) or no such schema follows, err stands.
func (d *docDecoder) schemaAfter(err error, sawSchema bool) error {
	if sawSchema || d.broken {
		return err
	}
	for d.dec.StackDepth() > 1 { // to the document's own members
		if k := d.dec.PeekKind(); k == ']' || k == '}' {
			if _, e := d.dec.ReadToken(); e != nil {
				return err
			}
		} else if e := d.dec.SkipValue(); e != nil {
			return err
		}
	}
	for d.dec.PeekKind() == '"' {
		name, e := d.dec.ReadToken()
		if e != nil {
			return err
		}
		if name.String() == "schema" {
			if _, serr := d.schema(); errors.Is(serr, ErrUnsupportedSchema) {
				return serr
			}
			return err
		}
		if e := d.dec.SkipValue(); e != nil {
			return err
		}
	}
	return err
}

// value reads the next value and returns it with its byte offset.
func (d *docDecoder) value() (jsontext.Value, int64, error) {
	v, err := d.dec.ReadValue()
	if err != nil {
		return nil, 0, d.syntax(err)
	}
	return v, d.dec.InputOffset() - int64(len(v)), nil
}

// section reads one array section (null is empty) into the decoder's lists.
func (d *docDecoder) section(name string, k recordKind, spanAt map[string]int64) error {
	if d.dec.PeekKind() == 'n' {
		_, err := d.dec.ReadValue()
		return d.syntax(err)
	}
	if kind := d.dec.PeekKind(); kind != '[' {
		v, start, err := d.value()
		if err != nil {
			return err
		}
		perr := typeError("", "an array", v)
		perr.Kind, perr.Offset = name, start
		return perr
	}
	if _, err := d.dec.ReadToken(); err != nil {
		return d.syntax(err)
	}
	for d.dec.PeekKind() != ']' {
		v, start, err := d.value()
		if err != nil {
			return err
		}
		if v[0] != '{' {
			perr := typeError("", "an object", v)
			perr.Kind, perr.Offset = name, start
			return perr
		}
		if err := d.element(k, name, v, start); err != nil {
			return err
		}
		switch k {
		case recSpanStart:
			if first, dup := spanAt[d.f.span.ID]; dup {
				return &ParseError{Offset: start, Kind: name, Field: "id",
					Msg: "duplicate span id " + strconv.Quote(d.f.span.ID) + " (first at offset " +
						strconv.FormatInt(first, 10) + ")",
					Err: &SpanError{SpanID: d.f.span.ID, Msg: "duplicate span id"}}
			}
			spanAt[d.f.span.ID] = start
			d.spans.add(&d.f.span)
		case recOp:
			d.ops.add(&d.f.op)
		case recTensor:
			d.tensors.add(&d.f.tensor)
		case recMemory:
			d.mem.add(&d.f.mem)
		case recDeviceMemory:
			d.devMem.add(&d.f.devMem)
		case recGradient:
			d.grads.add(&d.f.grad)
		case recEdge:
			d.edges.add(&d.f.edge)
		}
	}
	_, err := d.dec.ReadToken() // ']'
	return d.syntax(err)
}

// element parses the object v (at byte offset start) as a record of kind k.
func (d *docDecoder) element(k recordKind, section string, v []byte, start int64) error {
	d.alts = d.alts[:0]
	d.members = splitObject(v, d.members[:0], &d.alts)
	if perr := d.p.record(k, &d.f, v, d.members, d.alts, true); perr != nil {
		perr.Offset += start
		perr.Kind = section
		return perr
	}
	return nil
}

// nextOffset returns the byte offset of the token dec has peeked at (call
// PeekKind first): past the white space and separator dec holds before it.
func nextOffset(dec *jsontext.Decoder) int64 {
	rest := dec.UnreadBuffer()
	return dec.InputOffset() + int64(len(rest)-len(bytes.TrimLeft(rest, " \t\r\n,:")))
}

// syntax turns an error of the token stream into a *ParseError naming the
// byte offset; nil stays nil.
func (d *docDecoder) syntax(err error) error {
	if err == nil {
		return nil
	}
	d.broken = true
	var se *jsontext.SyntacticError
	// The decoder reports a failed read as a *SyntacticError too: it is a
	// read error, not invalid JSON.
	if d.in.failed(err) {
		return d.in.readError("")
	}
	if errors.As(err, &se) {
		msg := "invalid JSON: " + syntaxText(se)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			msg = "truncated document: it ends inside a JSON value"
		}
		return &ParseError{Offset: se.ByteOffset, Msg: msg, Err: fmt.Errorf("%w: %w", ErrInvalidJSON, err)}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
		return &ParseError{Offset: d.dec.InputOffset(), Msg: "truncated document", Err: err}
	}
	return &ParseError{Offset: d.dec.InputOffset(), Msg: "read: " + err.Error(), Err: err}
}
