package permrules

import "strings"

// A simple command of a Bash tool call: its words (quotes removed), which
// of them are redirection operators (a quoted ">" is a word, not one), and
// its text as written (trimmed), which wildcard rules match.
type simpleCommand struct {
	words []string
	ops   []bool
	text  string
}

type token struct {
	s  string
	op bool
}

// splitCommand cuts a shell command line into its simple commands at the
// control operators (;, &, &&, |, ||, |&, newline), the way Claude Code
// matches a compound command: each part on its own, so that
// Bash(safe-cmd:*) never approves `safe-cmd && other-cmd`. Redirections of
// one descriptor to another (2>&1) and to /dev/null are dropped from the
// words: they change nothing a rule names. ok is false when the line holds
// what cannot be read safely — command or process substitution, a here
// document, a subshell or group, an unclosed quote — and then no rule but a
// bare Bash matches it.
func splitCommand(line string) (cmds []simpleCommand, ok bool) {
	var (
		toks     []token
		word     strings.Builder
		inWord   bool
		start    = 0 // where the current simple command's text starts
		i        = 0
		n        = len(line)
		endWord  func()
		endCmd   func(end int)
		quotedAt = false // the current word had quotes (so "" is a word)
	)
	endWord = func() {
		if inWord || quotedAt {
			toks = append(toks, token{s: word.String()})
		}
		word.Reset()
		inWord, quotedAt = false, false
	}
	endCmd = func(end int) {
		endWord()
		text := strings.Trim(line[start:end], " \t")
		words, ops := dropRedirects(toks)
		if len(words) > 0 || text != "" {
			cmds = append(cmds, simpleCommand{words: words, ops: ops, text: text})
		}
		toks = nil
	}
	for i < n {
		c := line[i]
		switch {
		case c == '\\':
			if i+1 >= n {
				return nil, false // a trailing backslash
			}
			if line[i+1] == '\n' { // a line continuation
				i += 2
				continue
			}
			word.WriteByte(line[i+1])
			inWord = true
			i += 2
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			word.WriteString(line[i+1 : i+1+j])
			inWord, quotedAt = true, true
			i += j + 2
		case c == '"':
			i++
			closed := false
			for i < n {
				d := line[i]
				if d == '"' {
					closed = true
					i++
					break
				}
				if d == '`' || d == '$' && i+1 < n && line[i+1] == '(' {
					return nil, false
				}
				if d == '\\' && i+1 < n && strings.IndexByte("\"\\$`\n", line[i+1]) >= 0 {
					if line[i+1] != '\n' {
						word.WriteByte(line[i+1])
					}
					i += 2
					continue
				}
				word.WriteByte(d)
				i++
			}
			if !closed {
				return nil, false
			}
			inWord, quotedAt = true, true
		case c == '`', c == '$' && i+1 < n && line[i+1] == '(':
			return nil, false // command substitution
		case (c == '<' || c == '>') && i+1 < n && line[i+1] == '(':
			return nil, false // process substitution
		case c == '<' && i+1 < n && line[i+1] == '<':
			return nil, false // a here document or here string
		case c == '(' || c == ')':
			return nil, false // a subshell
		case c == '{' && !inWord && (i+1 >= n || isBlank(line[i+1])):
			return nil, false // a group
		case c == '#' && !inWord && !quotedAt:
			// A comment, to the end of the line: the command ends here.
			endCmd(i)
			j := strings.IndexByte(line[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j
			}
			start = i
		case c == ';' || c == '\n':
			endCmd(i)
			i++
			start = i
		case c == '&' || c == '|':
			// &, &&, |, ||, |&; but &> and >& are redirections.
			if c == '&' && i+1 < n && line[i+1] == '>' {
				endWord()
				toks = append(toks, token{s: "&>", op: true})
				i += 2
				continue
			}
			endCmd(i)
			i++
			if i < n && (line[i] == c || c == '|' && line[i] == '&') {
				i++
			}
			start = i
		case c == '<' || c == '>':
			// A redirection operator is a word of its own, with the
			// descriptor number written right before it.
			fd := ""
			if inWord && isDigits(word.String()) && !quotedAt {
				fd = word.String()
				word.Reset()
				inWord = false
			} else {
				endWord()
			}
			op := string(c)
			i++
			if i < n && (line[i] == '>' || c == '>' && line[i] == '|') { // >>, >|, <>
				op += string(line[i])
				i++
			}
			if i < n && line[i] == '&' {
				op += "&"
				i++
			}
			toks = append(toks, token{s: fd + op, op: true})
		case isBlank(c):
			endWord()
			i++
		default:
			word.WriteByte(c)
			inWord = true
			i++
		}
	}
	endCmd(n)
	return cmds, true
}

// dropRedirects removes redirections that change nothing a rule names:
// one descriptor to another (2>&1, >&2) and to /dev/null. It returns the
// words left and which of them are operators.
func dropRedirects(toks []token) (words []string, ops []bool) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.op && i+1 < len(toks) && !toks[i+1].op {
			// The operator and its target: "2>&" "1", ">" "/dev/null".
			target := toks[i+1].s
			if strings.HasSuffix(t.s, "&") && (isDigits(target) || target == "-") || target == "/dev/null" {
				i++
				continue
			}
		}
		words = append(words, t.s)
		ops = append(ops, t.op)
	}
	return words, ops
}

// opWrites: a redirection operator that opens a file for writing (>, >>,
// >|, <>, &>, 2>, …).
func opWrites(op string) bool { return strings.Contains(op, ">") }

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isBlank: the blanks that separate words in bash (a \r or \v is part of
// a word there, and so here).
func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// lexProblem says why splitCommand refused a line, for Parse's errors.
func lexProblem(s string) string {
	switch {
	case strings.Contains(s, "$(") || strings.Contains(s, "`"):
		return "command substitution ($(…) or `…`) is not matched by rules"
	case strings.Contains(s, "<(") || strings.Contains(s, ">("):
		return "process substitution is not matched by rules"
	case strings.Contains(s, "<<"):
		return "a here document is not matched by rules"
	case strings.ContainsAny(s, "()"):
		return "a subshell is not matched by rules (quote a literal parenthesis in the command: '(')"
	case strings.HasSuffix(s, `\`):
		return "it ends with a backslash"
	case strings.Contains(s, "{"):
		return "a { } group is not matched by rules"
	}
	return "an unclosed quote"
}
