package eventbus

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// ProjectIDOf is the top-level "projectId" string of the JSON object raw,
// as json.Unmarshal would read it into a field tagged `json:"projectId"`
// ("" when there is none): the payload's project, for a payload that is not
// Scoped. It reads the keys in place, without decoding the rest; a key or a
// value with escapes, or a value that is not valid UTF-8, is left to
// encoding/json.
func ProjectIDOf(raw []byte) string {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ""
	}
	found := ""
	i++
	for {
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] == '}' {
			return found
		}
		if raw[i] == ',' {
			i++
			continue
		}
		key, next, plain := str(raw, i)
		if next < 0 {
			return found // not valid JSON: what was found so far
		}
		i = skipSpace(raw, next)
		if i >= len(raw) || raw[i] != ':' {
			return found
		}
		i = skipSpace(raw, i+1)
		valStart := i
		i = skipValue(raw, i)
		if i < 0 {
			return found
		}
		if !plain {
			return slowProjectID(raw) // an escaped key may name it
		}
		if !bytes.EqualFold(key, []byte("projectId")) || raw[valStart] != '"' {
			continue
		}
		val, _, vplain := str(raw, valStart)
		if !vplain || !utf8.Valid(val) {
			return slowProjectID(raw)
		}
		found = string(val)
	}
}

// slowProjectID reads the projectId the way the bus always did.
func slowProjectID(raw []byte) string {
	var p struct {
		ProjectID string `json:"projectId"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.ProjectID
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// str reads the JSON string at b[i] (a quote): its contents as written, the
// index after its closing quote (-1: no string), and whether it has no
// escapes.
func str(b []byte, i int) (s []byte, next int, plain bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, -1, false
	}
	plain = true
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			plain = false
			j++
		case '"':
			return b[i+1 : j], j + 1, plain
		}
	}
	return nil, -1, false
}

// skipValue is the index after the JSON value at b[i] (-1: none).
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		_, next, _ := str(b, i)
		return next
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				_, next, _ := str(b, i)
				if next < 0 {
					return -1
				}
				i = next - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	// A number or a literal: up to the next delimiter.
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}
