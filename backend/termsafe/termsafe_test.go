package termsafe

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\n":                        "plain text\n",
		"tab\tand é ✓\r\n":                    "tab\tand é ✓\r\n",
		"\x1b]0;pwned\x07title":               `\x1b]0;pwned\x07title`,
		"\x1b[2J\x1b[H":                       `\x1b[2J\x1b[H`,
		"\x1b]8;;http://evil\x1b\\link":       `\x1b]8;;http://evil\x1b\link`,
		"safe\roverwritten":                   `safe\roverwritten`,
		"bell\x07 del\x7f nul\x00 bs\x08":     `bell\x07 del\x7f nul\x00 bs\x08`,
		"c1 csi \u009b2J osc \u009d0;x\u009c": `c1 csi \u009b2J osc \u009d0;x\u009c`,
		"raw \x9b2J and \xff":                 `raw \x9b2J and ` + "\xff",
		"cr at end\r":                         `cr at end\r`,
	} {
		if got := string(Escape([]byte(in))); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// A stream cut anywhere escapes as the whole does: a UTF-8 character or a
// CRLF split across writes is kept whole.
func TestWriterAcrossWrites(t *testing.T) {
	in := []byte("é\r\n✓\x1b[31m \u009b red\r\nend\r")
	for cut := 0; cut <= len(in); cut++ {
		var out bytes.Buffer
		w := New(&out)
		w.Write(in[:cut])
		w.Write(in[cut:])
		w.Flush()
		if out.String() != string(Escape(in)) {
			t.Errorf("cut at %d: %q, want %q", cut, out.String(), Escape(in))
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2Jb", "\u009b", "\xc2", "\xc2\x9b", "\r", "\r\n", "é✓\x7f", "\xe2\x28\xa1"} {
		f.Add([]byte(s), 1)
	}
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		out := Escape(b)
		for i := 0; i < len(out); {
			c := out[i]
			switch {
			case c == '\r':
				if i+1 >= len(out) || out[i+1] != '\n' {
					t.Fatalf("a bare CR passed: %q -> %q", b, out)
				}
			case c < 0x20 && c != '\n' && c != '\t', c == 0x7f:
				t.Fatalf("control %#x passed: %q -> %q", c, b, out)
			}
			r, n := utf8.DecodeRune(out[i:])
			if r >= 0x80 && r <= 0x9f {
				t.Fatalf("C1 %U passed: %q -> %q", r, b, out)
			}
			if r == utf8.RuneError && n == 1 && c >= 0x80 && c <= 0x9f {
				t.Fatalf("raw byte %#x passed: %q -> %q", c, b, out)
			}
			i += n
		}
		// Streamed in two writes, the same.
		if len(b) > 0 {
			cut = (cut%len(b) + len(b)) % len(b)
		} else {
			cut = 0
		}
		var buf bytes.Buffer
		w := New(&buf)
		w.Write(b[:cut])
		w.Write(b[cut:])
		w.Flush()
		if buf.String() != string(out) {
			t.Fatalf("streamed %q (cut %d) = %q, whole = %q", b, cut, buf.String(), out)
		}
	})
}
