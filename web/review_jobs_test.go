package web_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"
)

// jobJSON is GET /review/jobs/N.json (jobs.go jobView).
type jobJSON struct {
	ID          int64      `json:"id"`
	Run         int64      `json:"run"`
	Dataset     int64      `json:"dataset"`
	Queue       string     `json:"queue"`
	Decisions   []string   `json:"decisions"`
	State       string     `json:"state"`
	Judged      int        `json:"judged"`
	Total       int        `json:"total"`
	QueuedAt    time.Time  `json:"queued_at"`
	StartedAt   *time.Time `json:"started_at"`
	JudgedAgain bool       `json:"judged_again"`
	NewRun      int64      `json:"new_run"`
	ResultURL   string     `json:"result_url"`
	Error       string     `json:"error"`
	Retry       string     `json:"retry"`
	URL         string     `json:"url"`
	Version     int64      `json:"version"`
}

var jobLocRE = regexp.MustCompile(`^/review/jobs/(\d+)\?watch=1$`)

// jobAt reads the job's JSON, waiting (the endpoint's long poll) until its
// version passes after; after -1 answers at once.
func (c *client) jobAt(id int64, after int64) jobJSON {
	c.t.Helper()
	p := c.get(fmt.Sprintf("/review/jobs/%d.json?after=%d", id, after))
	if p.status != 200 {
		c.t.Fatalf("job %d: %d %s", id, p.status, p.body)
	}
	var j jobJSON
	if err := json.Unmarshal([]byte(p.body), &j); err != nil {
		c.t.Fatalf("job %d: %v\n%s", id, err, p.body)
	}
	return j
}

// waitJob follows job id through its JSON until it has ended: each read
// waits on the job's next change, so no test waits on time.
func (c *client) waitJob(id int64) jobJSON {
	c.t.Helper()
	j := c.jobAt(id, -1)
	for j.State == "queued" || j.State == "running" {
		j = c.jobAt(id, j.Version)
	}
	return j
}

// jobOf is the job id of an accepted decision's 303 to its job page.
func jobOf(t *testing.T, p page) int64 {
	t.Helper()
	loc := redirect(t, p, "")
	m := jobLocRE.FindStringSubmatch(loc)
	if m == nil {
		t.Fatalf("303 to %q, not to a job page", loc)
	}
	var id int64
	fmt.Sscan(m[1], &id)
	return id
}

// followJob: p (a decision's answer) goes to a job page; once the job is
// done, that page goes on to want (the new run's queue with ?from=).
func followJob(t *testing.T, c *client, p page, want string) string {
	t.Helper()
	id := jobOf(t, p)
	if j := c.waitJob(id); j.State != "done" {
		t.Fatalf("job %d ended %s: %s", id, j.State, j.Error)
	}
	return redirect(t, c.get(fmt.Sprintf("/review/jobs/%d?watch=1", id)), want)
}
