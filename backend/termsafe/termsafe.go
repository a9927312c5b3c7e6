// Package termsafe makes text an agent wrote inert on a terminal (SPEC,
// threat model: agent text is inert on a terminal). A terminal acts on the
// control characters in what it is given — an escape sequence can retitle
// the window, clear the screen, move the cursor to overwrite what was shown,
// plant a link that says one thing and opens another, or (on some
// terminals) answer back into the input — so the CLI passes what it prints
// of an agent's log, events and fields through an escaping Writer when it
// writes to a terminal. Each control character is shown as a visible
// escape instead of acting:
//
//	C0 controls (0x00–0x1F) but newline and tab   \x1b, \x07, \r …
//	DEL (0x7F)                                     \x7f
//	C1 controls (U+0080–U+009F, UTF-8 encoded)     \u009b …
//	bytes 0x80–0x9F that are not UTF-8             \x9b …
//
// A carriage return right before a newline (a CRLF line end) is kept:
// it only ends the line. Everything else — printable text, UTF-8, invalid
// bytes a terminal shows as such — passes unchanged.
package termsafe

import (
	"io"
	"strconv"
	"unicode/utf8"
)

// Escape returns b with its control characters escaped (as Writer does for
// a whole stream: a trailing incomplete UTF-8 sequence or carriage return
// is escaped as it stands).
func Escape(b []byte) []byte {
	out, rest := escape(nil, b, true)
	return append(out, rest...)
}

// Writer escapes what is written to it and writes that to W. It keeps back
// the end of a write that may continue in the next one (an incomplete UTF-8
// sequence, a carriage return that may start a CRLF); Flush writes it.
type Writer struct {
	W     io.Writer
	carry []byte
	buf   []byte
}

// New returns a Writer onto w.
func New(w io.Writer) *Writer { return &Writer{W: w} }

// Write escapes p and writes it; it reports len(p) when the escaped bytes
// were written.
func (w *Writer) Write(p []byte) (int, error) {
	in := p
	if len(w.carry) > 0 {
		in = append(append([]byte{}, w.carry...), p...)
	}
	var rest []byte
	w.buf, rest = escape(w.buf[:0], in, false)
	w.carry = append(w.carry[:0], rest...)
	if len(w.buf) > 0 {
		if _, err := w.W.Write(w.buf); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what was kept back, escaped as it stands.
func (w *Writer) Flush() error {
	if len(w.carry) == 0 {
		return nil
	}
	out, rest := escape(nil, w.carry, true)
	w.carry = w.carry[:0]
	_, err := w.W.Write(append(out, rest...))
	return err
}

// escape appends b, escaped, to out. Unless final, an end that may
// continue (an incomplete UTF-8 sequence, a last '\r') is returned as rest
// instead.
func escape(out, b []byte, final bool) (_, rest []byte) {
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\n' || c == '\t':
			out = append(out, c)
			i++
		case c == '\r':
			switch {
			case i+1 < len(b) && b[i+1] == '\n':
				out = append(out, '\r', '\n')
				i += 2
			case i+1 == len(b) && !final:
				return out, b[i:]
			default:
				out = append(out, `\r`...)
				i++
			}
		case c < 0x20 || c == 0x7f:
			out = hexByte(out, c)
			i++
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			if !final && !utf8.FullRune(b[i:]) {
				return out, b[i:]
			}
			r, n := utf8.DecodeRune(b[i:])
			switch {
			case r == utf8.RuneError && n == 1:
				if c <= 0x9f { // a C1 control in an 8-bit terminal
					out = hexByte(out, c)
				} else {
					out = append(out, c)
				}
			case r >= 0x80 && r <= 0x9f:
				out = append(out, `\u00`...)
				out = append(out, hex2(byte(r))...)
			default:
				out = append(out, b[i:i+n]...)
			}
			i += n
		}
	}
	return out, nil
}

func hexByte(out []byte, c byte) []byte {
	return append(append(out, `\x`...), hex2(c)...)
}

func hex2(c byte) string {
	s := strconv.FormatUint(uint64(c), 16)
	if len(s) == 1 {
		s = "0" + s
	}
	return s
}
