package registry

import (
	"fmt"
	"testing"
)

func applyAll(t *testing.T, s *state, records ...[2]string) {
	t.Helper()
	for _, r := range records {
		var value []byte
		if r[1] != "" {
			value = []byte(r[1])
		}
		decoded, err := decodeRecord([]byte(r[0]), value)
		if err != nil {
			t.Fatal(err)
		}
		s.apply(decoded)
	}
}

// TestStateReplay replays the records of a registration, a soft delete, a
// subject delete and a hard delete, as a Confluent registry writes them.
func TestStateReplay(t *testing.T) {
	s := newState()
	applyAll(t, s,
		[2]string{`{"keytype":"SCHEMA","subject":"a","version":1,"magic":1}`, `{"subject":"a","version":1,"id":1,"schema":"\"string\"","deleted":false}`},
		[2]string{`{"keytype":"SCHEMA","subject":"a","version":2,"magic":1}`, `{"subject":"a","version":2,"id":5,"schema":"\"int\"","deleted":false}`},
		[2]string{`{"keytype":"SCHEMA","subject":"b","version":1,"magic":1}`, `{"subject":"b","version":1,"id":1,"schema":"\"string\"","deleted":false}`},
		[2]string{`{"keytype":"CONFIG","subject":"a","magic":0}`, `{"compatibilityLevel":"NONE"}`},
		[2]string{`{"keytype":"MODE","magic":0}`, `{"mode":"READONLY"}`},
		[2]string{`{"keytype":"SCHEMA","subject":"a","version":2,"magic":1}`, `{"subject":"a","version":2,"id":5,"schema":"\"int\"","deleted":true}`},
		[2]string{`{"keytype":"DELETE_SUBJECT","subject":"b","magic":0}`, `{"subject":"b","version":1}`},
		[2]string{`{"keytype":"SCHEMA","subject":"b","version":1,"magic":1}`, ``},
	)
	if got := fmt.Sprint(s.subjectNames(false, false, "")); got != "[a]" {
		t.Fatalf("live subjects %s", got)
	}
	if got := len(s.sortedVersions("a", false)); got != 1 {
		t.Fatalf("live versions of a: %d", got)
	}
	if got := len(s.sortedVersions("a", true)); got != 2 {
		t.Fatalf("all versions of a: %d", got)
	}
	if s.subjects["b"] != nil {
		t.Fatal("hard-deleted subject b is still there")
	}
	if s.maxID != 5 || s.compatibilityLevel("a") != "NONE" || s.compatibilityLevel("b") != "BACKWARD" || s.mode("a") != modeReadOnly {
		t.Fatalf("maxID %d, levels %s %s, mode %s", s.maxID, s.compatibilityLevel("a"), s.compatibilityLevel("b"), s.mode("a"))
	}
	if _, err := decodeRecord([]byte(`not json`), []byte(`{}`)); err == nil {
		t.Fatal("decoded a key that is not JSON")
	}
	if _, err := decodeRecord([]byte(`{"keytype":"SCHEMA","subject":"a","version":1}`), []byte(`{"schema":"x"}`)); err == nil {
		t.Fatal("decoded a schema without an id")
	}
}
