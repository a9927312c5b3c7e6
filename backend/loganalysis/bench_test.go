package loganalysis

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchTail is a realistic stream-json tail of about 100 KiB: a run's init,
// many assistant and tool lines, and its result.
func benchTail() []byte {
	var b strings.Builder
	b.WriteString(`{"type":"system","subtype":"init","cwd":"/home/user/src/webapp","session_id":"` + sid1 + `","tools":["Bash","Read","Edit"],"model":"claude-sonnet-4-5-20250929","permissionMode":"acceptEdits","uuid":"u0"}` + "\n")
	for i := 0; b.Len() < 100<<10; i++ {
		fmt.Fprintf(&b, `{"type":"assistant","message":{"id":"msg_%04d","type":"message","role":"assistant","content":[{"type":"text","text":"Step %d: reading the handler and fixing the error path %s"}],"usage":{"input_tokens":12,"output_tokens":87}},"parent_tool_use_id":null,"session_id":"%s","uuid":"u%d"}`+"\n", i, i, strings.Repeat("lorem ipsum ", 20), sid1, i)
		fmt.Fprintf(&b, `{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_%04d","type":"tool_result","content":"ok  \texample.com/webapp/api\t0.412s"}]},"parent_tool_use_id":null,"session_id":"%s","uuid":"v%d"}`+"\n", i, sid1, i)
	}
	b.WriteString(`{"type":"result","subtype":"success","is_error":false,"duration_ms":48213,"num_turns":7,"result":"All tests pass.","session_id":"` + sid1 + `","total_cost_usd":0.1234}` + "\n")
	return []byte(b.String())
}

// writeSparse writes a file of the given size whose last bytes are tail and
// whose rest is a hole: no data is written for it.
func writeSparse(b *testing.B, size int64, tail []byte) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "agent.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if len(tail) > int(size) {
		tail = tail[len(tail)-int(size):]
	}
	if err := f.Truncate(size); err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteAt(tail, size-int64(len(tail))); err != nil {
		b.Fatal(err)
	}
	return p
}

func benchAnalyze(b *testing.B, path string, want Verdict) {
	benchAnalyzeAs(b, path, claudeProfile, want)
}

func benchAnalyzeAs(b *testing.B, path string, p Profile, want Verdict) {
	b.ReportAllocs()
	for b.Loop() {
		res, err := Analyze(path, p)
		if err != nil || res.Verdict != want {
			b.Fatalf("%+v, %v", res, err)
		}
	}
}

func BenchmarkAnalyze1KiB(b *testing.B) {
	// A whole small log: init, a few lines, result.
	var log strings.Builder
	log.WriteString(`{"type":"system","subtype":"init","session_id":"` + sid1 + `"}` + "\n")
	res := `{"type":"result","subtype":"success","is_error":false,"num_turns":2,"session_id":"` + sid1 + `"}` + "\n"
	line := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Working."}]},"session_id":"` + sid1 + `"}` + "\n"
	for log.Len()+len(line)+len(res) <= 1024 {
		log.WriteString(line)
	}
	log.WriteString(res)
	small := []byte(log.String())
	benchAnalyze(b, writeSparse(b, int64(len(small)), small), Completed)
}

// 1 MiB and 1 GiB hold the same real tail: the same cost proves that it
// does not grow with the log.
func BenchmarkAnalyze1MiB(b *testing.B) {
	benchAnalyze(b, writeSparse(b, 1<<20, benchTail()), Completed)
}

func BenchmarkAnalyze1GiB(b *testing.B) {
	benchAnalyze(b, writeSparse(b, 1<<30, benchTail()), Completed)
}

// A Codex log of 1 GiB ending in a long run: the cost is that of its last
// 64 KiB, as for a small one.
func BenchmarkAnalyzeCodex1GiB(b *testing.B) {
	var tail strings.Builder
	tail.WriteString(`{"type":"thread.started","thread_id":"t"}` + "\n" + `{"type":"turn.started"}` + "\n")
	item := `{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'go test ./...'","aggregated_output":"ok  shepherd/backend/store 0.5s\n","exit_code":0,"status":"completed"}}` + "\n"
	for tail.Len() < 60<<10 {
		tail.WriteString(item)
	}
	tail.WriteString(`{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122,"reasoning_output_tokens":64}}` + "\n")
	benchAnalyzeAs(b, writeSparse(b, 1<<30, []byte(tail.String())), codexProfile, Completed)
}

func BenchmarkScannerFeed(b *testing.B) {
	tail := benchTail()
	b.SetBytes(int64(len(tail)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewScanner(claudeProfile)
		for i := 0; i < len(tail); i += 4096 {
			s.Feed(tail[i:min(i+4096, len(tail))])
		}
		if s.Result() == nil {
			b.Fatal("no result")
		}
	}
}
