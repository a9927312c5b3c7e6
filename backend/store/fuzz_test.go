package store

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"shepherd/backend/lifecycle"
)

// FuzzParseRecord: a record.json is either refused or survives what the
// engine does with it — saved again as WriteJSON writes it, and read back —
// unchanged, and what is accepted holds only known statuses and reasons.
// The seeds are in testdata/fuzz/FuzzParseRecord: one record per status,
// exit reasons, optional fields set and unset, and broken files.
func FuzzParseRecord(f *testing.F) {
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecord(b)
		if err != nil {
			if r != nil {
				t.Fatalf("refused (%v) but returned %+v", err, r)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("accepted input that is not exactly one JSON value: %q", b)
		}
		switch {
		case ValidID(r.ID) != nil, r.Command == "":
			t.Fatalf("accepted a record without a valid id or a command: %+v", r)
		case !lifecycle.Valid(r.Status):
			t.Fatalf("accepted status %q", r.Status)
		case !lifecycle.ValidReason(r.ExitReason):
			t.Fatalf("accepted exit reason %q", r.ExitReason)
		case r.PreviousStatus != "" && !lifecycle.Valid(r.PreviousStatus):
			t.Fatalf("accepted previous status %q", r.PreviousStatus)
		case r.Desired != "" && r.Desired != lifecycle.DesiredRunning && r.Desired != lifecycle.DesiredStopped:
			t.Fatalf("accepted desired state %q", r.Desired)
		case r.PID < 0 || r.ShimPID < 0:
			t.Fatalf("accepted pids %d, %d", r.PID, r.ShimPID)
		}

		// As WriteJSON (SaveRecord) writes it.
		saved, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatalf("accepted a record that cannot be saved again: %v", err)
		}
		again, err := ParseRecord(saved)
		if err != nil {
			t.Fatalf("the saved record is refused: %v\n%s", err, saved)
		}
		// An empty list or map and none are the same to every reader, and
		// omitempty writes both as nothing.
		if diff := cmp.Diff(r, again, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("record changed by a save and load (-first +again):\n%s", diff)
		}
		resaved, err := json.MarshalIndent(again, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(saved, resaved) {
			t.Fatalf("saving is not stable:\n%s\nthen\n%s", saved, resaved)
		}
	})
}
