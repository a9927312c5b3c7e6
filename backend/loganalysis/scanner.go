package loganalysis

import "bytes"

// Scanner follows a log while the agent writes it: feed it the bytes
// appended since the last call. It keeps only the current partial line
// (at most TailBytes; a longer line is dropped whole), so its memory does
// not grow with the log. Lines are read exactly as Analyze reads them.
//
// Only the claude-stream-json and codex-json profiles yield anything; for
// the generic profile Feed does nothing. A Scanner is not safe for concurrent use.
type Scanner struct {
	claude   bool
	codex    bool
	cx       codexState
	pending  []byte // the partial line so far
	skipping bool   // dropping the rest of an overlong line
	st       claudeState
}

// NewScanner returns a Scanner for the profile. An invalid profile reads as
// generic (nothing learned); check it with Profile.Validate.
func NewScanner(p Profile) *Scanner {
	return &Scanner{claude: p.Name == ProfileClaude, codex: p.Name == ProfileCodex, st: claudeState{trackTools: true}}
}

// SkipToNextLine drops the bytes up to and including the next newline: use
// it when the first bytes fed may start in the middle of a line (following a
// log from an offset found afterwards rather than from its start).
func (s *Scanner) SkipToNextLine() {
	s.pending = s.pending[:0]
	s.skipping = true
}

// Feed takes bytes appended to the log. It returns the latest session id seen
// so far (see Result.SessionID) and the latest result line completed in this
// call, nil if none. A result line followed, in the same call, by a new
// run's init line is superseded and not returned. A line counts once its
// newline has been fed.
func (s *Scanner) Feed(b []byte) (sessionID string, result *Claude) {
	if !s.claude && !s.codex {
		return "", nil
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 { // the line goes on in a later call
			switch {
			case s.skipping:
			case len(s.pending)+len(b) > TailBytes:
				s.pending, s.skipping = s.pending[:0], true
			default:
				s.pending = append(s.pending, b...)
			}
			break
		}
		chunk := b[:i]
		b = b[i+1:]
		if s.skipping {
			s.skipping = false
			continue
		}
		line := chunk
		if len(s.pending) > 0 {
			if len(s.pending)+len(chunk) > TailBytes {
				s.pending = s.pending[:0]
				continue
			}
			s.pending = append(s.pending, chunk...)
			line = s.pending
		}
		if len(line) <= TailBytes && s.codex {
			switch kind, c := s.cx.line(bytes.TrimSuffix(line, []byte{'\r'})); kind {
			case kindInit:
				result = nil
			case kindResult:
				result = c
			}
			s.cx.runLine = nil // it may point into pending
		} else if len(line) <= TailBytes {
			// Until an init line names the session, every line is parsed for
			// its session_id; after, only those that may decide.
			switch kind, c := s.st.line(bytes.TrimSuffix(line, []byte{'\r'}), s.st.initSID == ""); kind {
			case kindInit:
				result = nil
			case kindResult:
				result = c
			}
			s.st.resultLine = nil // it may point into pending
		}
		s.pending = s.pending[:0]
	}
	return s.SessionID(), result
}

// SessionID returns the latest session id seen so far.
func (s *Scanner) SessionID() string {
	if s.codex {
		return s.cx.thread
	}
	return s.st.sessionID()
}

// Result returns the result line of the latest run (for codex-json, its
// latest turn's end), nil if that run has written none (yet): a later init
// line clears it.
func (s *Scanner) Result() *Claude {
	if s.codex {
		return s.cx.run
	}
	return s.st.result
}

// Malformed counts the lines skipped because they looked like JSON events
// and were not (codex-json).
func (s *Scanner) Malformed() int { return s.cx.malformed }

// InFlight is the latest tool call started and not finished, if any.
func (s *Scanner) InFlight() (Tool, bool) {
	tools := s.st.tools
	if s.codex {
		tools = s.cx.tools
	}
	if n := len(tools); n > 0 {
		return tools[n-1], true
	}
	return Tool{}, false
}

// Retrying is the API call Claude Code is retrying now (its latest line is
// an api_retry), if any.
func (s *Scanner) Retrying() (Retry, bool) {
	if s.claude && s.st.retry != nil {
		return *s.st.retry, true
	}
	return Retry{}, false
}
