package cli

import (
	"errors"
	"strconv"
	"strings"
)

// Flag values pflag has no type for: a true/false or a count that
// remembers whether it was given, a count that refuses negatives; and
// splitWords, which reads --resume-args.

// optBool is a true/false flag that remembers whether it was given.
type optBool struct{ v *bool }

func (o *optBool) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.FormatBool(*o.v)
}

func (o *optBool) Type() string { return "bool" }

func (o *optBool) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want true or false")
	}
	o.v = &b
	return nil
}

// optInt is an integer flag that remembers whether it was given.
type optInt struct{ v *int }

func (o *optInt) String() string {
	if o == nil || o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optInt) Type() string { return "int" }

func (o *optInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	if n < 0 {
		return errors.New("must not be negative")
	}
	o.v = &n
	return nil
}

// nonNegInt is an integer flag that refuses negative values.
type nonNegInt int

func (n *nonNegInt) String() string { return strconv.Itoa(int(*n)) }
func (n *nonNegInt) Type() string   { return "int" }
func (n *nonNegInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	if v < 0 {
		return errors.New("must not be negative")
	}
	*n = nonNegInt(v)
	return nil
}

// splitWords splits s like a POSIX shell splits words: blanks separate,
// single quotes keep everything, double quotes keep all but \" and \\, a
// backslash outside quotes escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("unterminated single quote")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("unterminated double quote")
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
