package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// ErrPreds reports an existing predictions file that cannot be resumed: a
// line that is not a JSON object with an id (other than a torn last line).
var ErrPreds = errors.New("crystal run: predictions file")

// Resume is what OpenPreds found in an existing predictions file.
type Resume struct {
	// Answered holds the ids already answered by the model: records whose
	// "model" is the model, or that have no "model" (score names those
	// after the file, so they belong to whoever writes it).
	Answered map[string]bool
	// Lines is the number of records read; Others of those belonging to
	// other models (kept, not counted as answered).
	Lines, Others int
	// TornTail: the file ended in a partial line that is not JSON (a run
	// stopped mid-write); it was cut off, and that item will be asked again.
	TornTail bool
}

// OpenPreds opens the predictions file at path for appending — creating it
// when absent — and reads what is already there, so that a run can skip the
// ids the model already answered (resume). A last line without a newline is
// completed with one when it is a valid record, and cut off when it is not
// (TornTail). Any other line that is not a JSON object with a string or
// number "id" is an error wrapping ErrPreds that names the line; the file is
// then closed and left as it was. The caller closes the returned file.
func OpenPreds(path, model string) (*os.File, Resume, error) {
	res := Resume{Answered: map[string]bool{}}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, res, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, res, err
	}
	body := data
	var tail []byte // a last line without its newline
	if i := bytes.LastIndexByte(data, '\n'); i+1 < len(data) {
		body, tail = data[:i+1], data[i+1:]
	}
	lines := bytes.Split(body, []byte("\n"))
	for n, raw := range lines {
		if n == 0 {
			raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
		}
		if err := res.read(raw, model); err != nil {
			f.Close()
			return nil, res, fmt.Errorf("%w %s: line %d: %v", ErrPreds, path, n+1, err)
		}
	}
	if len(bytes.TrimSpace(tail)) > 0 {
		if len(body) == 0 {
			tail = bytes.TrimPrefix(tail, []byte("\ufeff"))
		}
		if err := res.read(tail, model); err == nil {
			_, err = f.Write([]byte("\n"))
			if err != nil {
				f.Close()
				return nil, res, err
			}
		} else {
			res.TornTail = true
			if err := f.Truncate(int64(len(body))); err != nil {
				f.Close()
				return nil, res, err
			}
		}
	}
	return f, res, nil
}

// read counts one line; blank lines are skipped.
func (res *Resume) read(raw []byte, model string) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	var rec struct {
		ID    json.RawMessage `json:"id"`
		Model string          `json:"model"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		return err
	}
	id := ""
	var s string
	switch {
	case json.Unmarshal(rec.ID, &s) == nil:
		id = s
	case len(rec.ID) > 0 && strings.ContainsAny(string(rec.ID[:1]), "-0123456789"):
		id = string(rec.ID)
	}
	if id == "" {
		return errors.New("no id")
	}
	res.Lines++
	if rec.Model != "" && rec.Model != model {
		res.Others++
		return nil
	}
	res.Answered[id] = true
	return nil
}
