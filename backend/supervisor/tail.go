package supervisor

import (
	"bytes"
	"io"
	"os"
)

// tailLines returns the last n lines of the file at path, reading backwards
// in blocks so the cost follows the size of the answer, not of the file. At
// most max bytes are returned.
func tailLines(path string, n int, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	const block = 64 << 10
	var buf []byte
	off := size
	for off > 0 && int64(len(buf)) < max {
		step := int64(block)
		if off < step {
			step = off
		}
		off -= step
		chunk := make([]byte, step)
		if _, err := f.ReadAt(chunk, off); err != nil && err != io.EOF {
			return nil, err
		}
		buf = append(chunk, buf...)
		// n lines need n newlines before them (the last line may lack one).
		body := bytes.TrimSuffix(buf, []byte{'\n'})
		if bytes.Count(body, []byte{'\n'}) >= n {
			break
		}
	}
	body := bytes.TrimSuffix(buf, []byte{'\n'})
	cut := len(body)
	for i := 0; i < n; i++ {
		j := bytes.LastIndexByte(body[:cut], '\n')
		if j < 0 {
			cut = -1
			break
		}
		cut = j
	}
	start := 0
	if cut >= 0 {
		start = cut + 1
	}
	out := buf[start:]
	if int64(len(out)) > max {
		out = out[int64(len(out))-max:]
	}
	return out, nil
}
