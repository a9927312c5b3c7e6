package workspace

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Diff is a worktree's changes against its base: the commits of its branch
// and what is not committed yet, untracked files included.
type Diff struct {
	Base      string     `json:"base"`      // the base as named
	From      string     `json:"from"`      // the commit compared with (where branch and base meet)
	Files     []FileDiff `json:"files"`     // in git's order
	Added     int        `json:"added"`     // lines, over all files
	Deleted   int        `json:"deleted"`   // lines, over all files
	Truncated bool       `json:"truncated"` // hunks were left out past MaxPatchBytes
}

// FileDiff is one changed file.
type FileDiff struct {
	Path    string `json:"path"`
	OldPath string `json:"oldPath,omitempty"` // a rename's or copy's source
	Status  string `json:"status"`            // added, deleted, modified, renamed, untracked
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
	// Mode is the file's mode when git says one (a new file, a mode
	// change): "120000" for a symlink (its content is the link's text, as
	// git shows it).
	Mode string `json:"mode,omitempty"`
	// Note says why a file's lines are not shown: a named pipe, socket or
	// device (never opened), too large, or past the diff's size.
	Note  string `json:"note,omitempty"`
	Hunks []Hunk `json:"hunks"`
}

// Hunk is one @@ section of a file's unified diff.
type Hunk struct {
	Header   string `json:"header"` // the whole @@ line
	OldStart int    `json:"oldStart"`
	OldLines int    `json:"oldLines"`
	NewStart int    `json:"newStart"`
	NewLines int    `json:"newLines"`
	Lines    []Line `json:"lines"`
}

// Line is one line of a hunk: Op is "+", "-" or " " (context); "\\" for
// git's "\ No newline at end of file".
type Line struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// MaxPatchBytes bounds the unified diff read for hunks; files past it keep
// their +/− counts and lose their hunks (Diff.Truncated).
var MaxPatchBytes = 32 << 20

// maxUntrackedBytes bounds what of one untracked file is read for its hunk;
// MaxUntrackedTotal what of all of them is (past it, files are listed
// without their lines and Diff.Truncated is set).
const maxUntrackedBytes = 1 << 20

var MaxUntrackedTotal = 16 << 20

// DiffOf compares w's folder (what is committed on its branch and what is
// not) with the commit where its branch and its base meet, so that what
// the base gained since does not show as the agent's removals. git runs
// pinned and hardened, with --no-ext-diff and --no-textconv; untracked files
// are read as agent files (no symlink followed: a symlink shows as its
// text, the way git shows one; a named pipe, socket or device is listed,
// never opened).
func DiffOf(ctx context.Context, w Workspace) (*Diff, error) {
	w, m := open(ctx, w)
	if m.text != "" {
		return nil, &vanishedError{m.text}
	}
	tg := w.treeGit()
	from, err := tg.line(ctx, "merge-base", baseRef(ctx, w), "HEAD")
	if err != nil || from == "" {
		from = w.BaseCommit
	}
	d := &Diff{Base: w.Base, From: from, Files: []FileDiff{}}
	opts := []string{"diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "-M", "--find-renames", "--no-color",
		"--src-prefix=a/", "--dst-prefix=b/"}
	num, err := tg.run(ctx, append(append([]string{}, opts...), "--numstat", "-z", from, "--")...)
	if err != nil {
		return nil, err
	}
	files, err := ParseNumstat(num)
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		patch, err := tg.run(ctx, append(append([]string{}, opts...), "--patch", from, "--")...)
		if err != nil {
			return nil, err
		}
		if len(patch) > MaxPatchBytes {
			d.Truncated = true
			for i := range files {
				files[i].Note = "not shown: the diff is too large"
			}
		} else {
			pf, err := ParsePatch(patch)
			if err != nil {
				return nil, err
			}
			attachHunks(files, pf)
		}
	}
	d.Files = files
	untracked, err := tg.run(ctx, "ls-files", "-z", "--others", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	budget := MaxUntrackedTotal
	for _, f := range splitZ(untracked) {
		fd := untrackedFile(w.Path, f, &budget)
		if fd.Note == noteOverBudget {
			d.Truncated = true
		}
		d.Files = append(d.Files, fd)
	}
	for _, f := range d.Files {
		d.Added += f.Added
		d.Deleted += f.Deleted
	}
	return d, nil
}

// vanishedError says what of a worktree is gone (ErrVanished).
type vanishedError struct{ what string }

func (e *vanishedError) Error() string { return e.what + "; there is nothing to compare" }
func (e *vanishedError) Unwrap() error { return ErrVanished }

// attachHunks gives each numstat file its patch's hunks and status. Both
// lists come from one diff with the same options, so they are in the same
// order; a patch file whose path disagrees is looked up by path instead.
func attachHunks(files []FileDiff, patch []FileDiff) {
	byPath := make(map[string]*FileDiff, len(patch))
	for i := range patch {
		byPath[patch[i].Path] = &patch[i]
	}
	for i := range files {
		var p *FileDiff
		if i < len(patch) && patch[i].Path == files[i].Path {
			p = &patch[i]
		} else {
			p = byPath[files[i].Path]
		}
		if p == nil {
			continue
		}
		files[i].Hunks, files[i].Mode = p.Hunks, p.Mode
		if p.Status != "" {
			files[i].Status = p.Status
		}
	}
}

const noteOverBudget = "not shown: the diff is too large"

// untrackedFile is an untracked file as an added one: every line a "+"; a
// symlink as git shows one (mode 120000, its text as its one line); a named
// pipe, socket or device only listed. budget is what may still be read of
// all untracked files.
func untrackedFile(dir, rel string, budget *int) FileDiff {
	fd := FileDiff{Path: rel, Status: "untracked", Hunks: []Hunk{}}
	if *budget <= 0 {
		fd.Note = noteOverBudget
		return fd
	}
	f, err := readAgentFile(dir, rel, min(maxUntrackedBytes, *budget))
	if err != nil {
		fd.Note = "cannot be read: " + err.Error()
		return fd
	}
	var text string
	switch f.kind {
	case kindSymlink:
		fd.Mode, text = "120000", f.link
	case kindRegular:
		*budget -= len(f.data)
		if bytes.IndexByte(f.data, 0) >= 0 {
			fd.Binary = true
			return fd
		}
		if f.truncated {
			if f.size > maxUntrackedBytes {
				fd.Note = fmt.Sprintf("too large to show (%s)", sizeText(f.size))
			} else {
				fd.Note = noteOverBudget
			}
			return fd
		}
		text = string(f.data)
	default:
		fd.Note = fmt.Sprintf("a %s: not read", f.kind)
		return fd
	}
	if text == "" {
		return fd
	}
	noEOL := !strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	h := Hunk{Header: fmt.Sprintf("@@ -0,0 +1,%d @@", len(lines)), NewStart: 1, NewLines: len(lines)}
	if len(lines) == 1 {
		h.Header = "@@ -0,0 +1 @@"
	}
	for _, l := range lines {
		h.Lines = append(h.Lines, Line{Op: "+", Text: l})
	}
	if noEOL {
		h.Lines = append(h.Lines, Line{Op: "\\", Text: " No newline at end of file"})
	}
	fd.Added = len(lines)
	fd.Hunks = []Hunk{h}
	return fd
}

// sizeText is n bytes in words.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseNumstat reads `git diff --numstat -z`: per file "added\tdeleted\tpath\0",
// or for a rename "added\tdeleted\t\0old\0new\0"; a binary file's counts
// are "-".
func ParseNumstat(b []byte) ([]FileDiff, error) {
	var out []FileDiff
	fields := strings.Split(string(b), "\x00")
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if rec == "" {
			if i == len(fields)-1 {
				break
			}
			return nil, fmt.Errorf("numstat: empty record at field %d", i)
		}
		parts := strings.SplitN(rec, "\t", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("numstat: %q is not added<TAB>deleted<TAB>path", rec)
		}
		fd := FileDiff{Status: "modified", Hunks: []Hunk{}}
		if parts[0] == "-" && parts[1] == "-" {
			fd.Binary = true
		} else {
			a, err1 := strconv.Atoi(parts[0])
			d, err2 := strconv.Atoi(parts[1])
			if err1 != nil || err2 != nil || a < 0 || d < 0 {
				return nil, fmt.Errorf("numstat: counts %q, %q are not numbers", parts[0], parts[1])
			}
			fd.Added, fd.Deleted = a, d
		}
		if parts[2] == "" { // a rename or copy: two more fields
			if i+2 >= len(fields) || fields[i+1] == "" || fields[i+2] == "" {
				return nil, fmt.Errorf("numstat: rename at field %d lacks its paths", i)
			}
			fd.OldPath, fd.Path, fd.Status = fields[i+1], fields[i+2], "renamed"
			i += 2
		} else {
			fd.Path = parts[2]
		}
		out = append(out, fd)
	}
	return out, nil
}

// ParsePatch reads a unified diff as git writes it (`git diff --patch`
// with a/ and b/ prefixes): per file its path, status and hunks. Counts are
// those of its hunks' lines.
func ParsePatch(b []byte) ([]FileDiff, error) {
	var files []FileDiff
	var cur *FileDiff
	var h *Hunk
	oldLeft, newLeft := 0, 0
	flushHunk := func() {
		if cur != nil && h != nil {
			cur.Hunks = append(cur.Hunks, *h)
		}
		h = nil
	}
	lines := bytes.Split(b, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for n, raw := range lines {
		line := string(raw)
		if h != nil && (oldLeft > 0 || newLeft > 0) {
			if line == "" {
				line = " " // an empty context line some tools write
			}
			op := line[:1]
			switch op {
			case " ":
				oldLeft--
				newLeft--
			case "-":
				oldLeft--
				cur.Deleted++
			case "+":
				newLeft--
				cur.Added++
			case "\\":
			default:
				return nil, fmt.Errorf("patch line %d: %q in a hunk with %d old and %d new lines to go", n+1, line, oldLeft, newLeft)
			}
			if oldLeft < 0 || newLeft < 0 {
				return nil, fmt.Errorf("patch line %d: hunk %q has more lines than its header says", n+1, h.Header)
			}
			h.Lines = append(h.Lines, Line{Op: op, Text: line[1:]})
			continue
		}
		if h != nil && strings.HasPrefix(line, "\\") {
			h.Lines = append(h.Lines, Line{Op: "\\", Text: line[1:]})
			continue
		}
		switch {
		case strings.HasPrefix(line, "diff --git "):
			flushHunk()
			if cur != nil {
				files = append(files, *cur)
			}
			cur = &FileDiff{Status: "modified", Hunks: []Hunk{}}
			cur.Path = pathFromDiffLine(line)
		case cur == nil:
			return nil, fmt.Errorf("patch line %d: %q before any \"diff --git\" line", n+1, line)
		case strings.HasPrefix(line, "@@ "):
			flushHunk()
			hk, err := parseHunkHeader(line)
			if err != nil {
				return nil, fmt.Errorf("patch line %d: %w", n+1, err)
			}
			h = &hk
			oldLeft, newLeft = hk.OldLines, hk.NewLines
		case h != nil:
			return nil, fmt.Errorf("patch line %d: %q after a complete hunk", n+1, line)
		case strings.HasPrefix(line, "new file mode "):
			cur.Status, cur.Mode = "added", strings.TrimPrefix(line, "new file mode ")
		case strings.HasPrefix(line, "deleted file mode"):
			cur.Status = "deleted"
		case strings.HasPrefix(line, "rename from "):
			cur.Status, cur.OldPath = "renamed", strings.TrimPrefix(line, "rename from ")
		case strings.HasPrefix(line, "rename to "):
			cur.Path = strings.TrimPrefix(line, "rename to ")
		case strings.HasPrefix(line, "copy from "):
			cur.Status, cur.OldPath = "copied", strings.TrimPrefix(line, "copy from ")
		case strings.HasPrefix(line, "copy to "):
			cur.Path = strings.TrimPrefix(line, "copy to ")
		case strings.HasPrefix(line, "Binary files "):
			cur.Binary = true
		case strings.HasPrefix(line, "+++ "):
			if p := strings.TrimPrefix(line, "+++ "); strings.HasPrefix(p, "b/") {
				cur.Path = strings.TrimSuffix(p[2:], "\t")
			}
		case strings.HasPrefix(line, "new mode "):
			cur.Mode = strings.TrimPrefix(line, "new mode ")
		case strings.HasPrefix(line, "--- "), strings.HasPrefix(line, "index "),
			strings.HasPrefix(line, "old mode"),
			strings.HasPrefix(line, "similarity index"), strings.HasPrefix(line, "dissimilarity index"):
		default:
			return nil, fmt.Errorf("patch line %d: %q is not part of a unified diff header", n+1, line)
		}
	}
	if h != nil && (oldLeft > 0 || newLeft > 0) {
		return nil, fmt.Errorf("patch ends inside hunk %q (%d old, %d new lines missing)", h.Header, oldLeft, newLeft)
	}
	flushHunk()
	if cur != nil {
		files = append(files, *cur)
	}
	return files, nil
}

// pathFromDiffLine takes the b/ path of "diff --git a/x b/x" (paths with
// no spaces in them are unambiguous; the "+++"/"rename to" lines that follow
// set it exactly when there are).
func pathFromDiffLine(line string) string {
	rest := strings.TrimPrefix(line, "diff --git ")
	if i := strings.LastIndex(rest, " b/"); i >= 0 {
		return rest[i+3:]
	}
	return rest
}

// parseHunkHeader reads "@@ -l[,s] +l[,s] @@ [section]".
func parseHunkHeader(line string) (Hunk, error) {
	h := Hunk{Header: line}
	body, ok := strings.CutPrefix(line, "@@ ")
	if !ok {
		return h, fmt.Errorf("hunk header %q does not start with @@", line)
	}
	end := strings.Index(body, " @@")
	if end < 0 {
		return h, fmt.Errorf("hunk header %q has no closing @@", line)
	}
	f := strings.Fields(body[:end])
	if len(f) != 2 || !strings.HasPrefix(f[0], "-") || !strings.HasPrefix(f[1], "+") {
		return h, fmt.Errorf("hunk header %q is not -old +new", line)
	}
	var err error
	if h.OldStart, h.OldLines, err = parseRange(f[0][1:]); err != nil {
		return h, fmt.Errorf("hunk header %q: %w", line, err)
	}
	if h.NewStart, h.NewLines, err = parseRange(f[1][1:]); err != nil {
		return h, fmt.Errorf("hunk header %q: %w", line, err)
	}
	return h, nil
}

const maxHunkLines = 1 << 30

func parseRange(s string) (start, count int, err error) {
	a, b, has := strings.Cut(s, ",")
	if start, err = strconv.Atoi(a); err != nil || start < 0 {
		return 0, 0, fmt.Errorf("range %q: bad start", s)
	}
	count = 1
	if has {
		if count, err = strconv.Atoi(b); err != nil || count < 0 || count > maxHunkLines {
			return 0, 0, fmt.Errorf("range %q: bad count", s)
		}
	}
	return start, count, nil
}
