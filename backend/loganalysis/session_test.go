package loganalysis

import "testing"

func TestCheckSessionID(t *testing.T) {
	for _, id := range []string{"3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71", "0199a213-81c0-7800-8aa1-bbab2a035a53", "3F2A9C4E-8B1D-4E6F-A2C7-5D9E0F1B3A71"} {
		if err := CheckSessionID(id); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	for _, id := range []string{"", "sess-1", "--dangerously-skip-permissions", "3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71 --x",
		"3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a71\n", "../../etc/passwd", "3f2a9c4e8b1d4e6fa2c75d9e0f1b3a71", "3f2a9c4e-8b1d-4e6f-a2c7-5d9e0f1b3a7z"} {
		if err := CheckSessionID(id); err == nil {
			t.Errorf("%q accepted", id)
		}
	}
}
