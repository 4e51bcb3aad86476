package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"evident/persona"
)

// storedRecord reads the record column of one verdict row as SQLite holds it.
func storedRecord(t *testing.T, db *DB, runID int64, seq int) string {
	t.Helper()
	var js string
	if err := db.sql.QueryRowContext(context.Background(), "SELECT record FROM verdict WHERE run_id = ? AND seq = ?", runID, seq).Scan(&js); err != nil {
		t.Fatal(err)
	}
	return js
}

// TestAStoredRecordHasTheBatchOutputsBytes: the record column holds what
// the batch output writes for the record (persona.AppendRecord, without
// its '\n'): U+2028 in a summary stays as it is (encoding/json would write
// \u2028), and a string that is not UTF-8 (a record built outside the
// readers) is stored as JSON with U+FFFD in place of the bad byte.
func TestAStoredRecordHasTheBatchOutputsBytes(t *testing.T) {
	db := openMem(t)
	turns, recs := synthSet(2)
	recs[0].Summary = "줄\u2028바꿈 「먹쇠」가 나왔습니다."
	recs[1].Summary = "깨진\xff바이트입니다."
	info := writeRun(t, db, RunMeta{Profile: "seed"}, recs, turns)

	want, ok := persona.AppendRecord(nil, &recs[0])
	if !ok {
		t.Fatal("persona.AppendRecord declined a record the judge could write")
	}
	if got := storedRecord(t, db, info.ID, 0); got != strings.TrimSuffix(string(want), "\n") {
		t.Errorf("stored record\n%s\nwant the batch output's\n%s", got, want)
	}

	got := storedRecord(t, db, info.ID, 1)
	var back persona.Record
	if err := json.Unmarshal([]byte(got), &back); err != nil {
		t.Fatalf("stored record is not JSON: %v\n%s", err, got)
	}
	if back.Summary != "깨진\uFFFD바이트입니다." {
		t.Errorf("summary read back = %q, want the bad byte as U+FFFD", back.Summary)
	}
}
