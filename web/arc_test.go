package web_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"evident/arc/api"
	arcclient "evident/arc/client"
	"evident/arc/frame"
	"evident/arc/games"
	"evident/arc/score"
	"evident/arc/session"
	"evident/store"
	"evident/web"
)

// arcFixture is an ARC folder built in a temporary directory: run
// "lights-run" (Lights played by the real client against the local game
// server: level 1 won, 55 clicks on level 2, a level RESET, one more click;
// a hand-written transcript of 72 entries; one mismatch folder; two git
// tags), run "trek-run" (started only, no transcript), a folder that is not
// a workspace, and a symbolic link to a workspace outside the folder.
type arcFixture struct {
	dir, lights, outside string
	level1               []session.Action
}

// hostilePrompt is a prompt text that must reach the page as text.
const hostilePrompt = `Play the game. <script>alert("pwned")</script> <img src=x onerror=alert(1)>`

const (
	snapCommit1 = "1111111111111111111111111111111111111111"
	snapCommit2 = "2222222222222222222222222222222222222222"
	movedCommit = "3333333333333333333333333333333333333333"
)

func newARCFixture(t *testing.T) *arcFixture {
	t.Helper()
	ctx := context.Background()
	gs := httptest.NewServer(games.NewServer(games.Config{}))
	t.Cleanup(gs.Close)
	dir := t.TempDir()
	f := &arcFixture{dir: dir, lights: filepath.Join(dir, "lights-run"), outside: t.TempDir()}

	c, err := arcclient.New(arcclient.Options{Workspace: f.lights})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, gs.URL, games.Lights.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	play := func(acts ...session.Action) {
		t.Helper()
		for _, a := range acts {
			if _, err := c.Move(ctx, a, nil); err != nil {
				t.Fatalf("%v: %v", a, err)
			}
		}
	}
	f.level1 = games.Lights.Solution(0, 1)
	play(f.level1...)
	for i := 0; i < 55; i++ {
		play(session.Action{Name: "ACTION6", X: 1 + i%3, Y: 1})
	}
	play(session.Action{Name: "RESET"}, session.Action{Name: "ACTION6", X: 12, Y: 40})

	// The transcript: the contract's kinds, an unknown kind, a bad line,
	// and 60 numbered agent events so that it pages.
	var tr strings.Builder
	line := func(s string) { tr.WriteString(s + "\n") }
	line(`{"time":"2026-12-01T10:00:00.000000001Z","iteration":0,"kind":"prompt","name":"main","text":` + strconv.Quote(hostilePrompt) + `,"session":"fresh"}`)
	line(`{"time":"2026-12-01T10:00:01Z","iteration":0,"kind":"agent_event","event":{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"I will write the world model first."}}}`)
	line(`{"time":"2026-12-01T10:00:02Z","iteration":0,"kind":"agent_event","event":{"type":"assistant","message":{"content":[{"type":"text","text":"Predicting ACTION6 at 12,40."},{"type":"tool_use","name":"Bash","input":{"command":"python plan_executor.py"}}]}}}`)
	line(`{"time":"2026-12-01T10:05:00Z","iteration":0,"kind":"turn","exit_code":0,"seconds":299.5,"timed_out":false,"agent_session":"thread-abc"}`)
	line(`{"time":"2026-12-01T10:05:01Z","iteration":1,"kind":"inspection","level":2,"attempt":1,"steps_total":59,"steps_level":55,"game_over":false,"solved":false,"new_steps":59,"next":"continuation"}`)
	line(`{"time":"2026-12-01T10:05:02Z","iteration":1,"kind":"snapshot","commit":"` + snapCommit1 + `","tag":"iteration_1","message":"level_2 59 1"}`)
	line(`{"time":"2026-12-01T10:05:03Z","iteration":1,"kind":"refusal","what":"RESET by the agent","why":"RESET is the controller's"}`)
	line(`{"time":"2026-12-01T10:05:04Z","iteration":1,"kind":"reset","output":"level 2 attempt 2 opened"}`)
	line(`{"time":"2026-12-01T10:05:05Z","iteration":1,"kind":"mystery","detail":"kept raw"}`)
	line(`this line is not JSON`)
	for i := 0; i < 60; i++ {
		line(fmt.Sprintf(`{"time":"2026-12-01T10:06:%02dZ","iteration":2,"kind":"agent_event","event":{"text":"event %02d"}}`, i, i))
	}
	line(`{"time":"2026-12-01T10:07:00Z","iteration":2,"kind":"snapshot","commit":"` + snapCommit2 + `","tag":"iteration_2","message":"level_2 61 2"}`)
	line(`{"time":"2026-12-01T10:07:01Z","iteration":2,"kind":"stop","reason":"no new steps after the stuck prompt"}`)
	writeFile(t, filepath.Join(f.lights, "agent", "transcript.jsonl"), tr.String())
	writeFile(t, filepath.Join(f.lights, ".git", "refs", "tags", "iteration_1"), snapCommit1+"\n")
	writeFile(t, filepath.Join(f.lights, ".git", "packed-refs"), "# pack-refs with: peeled fully-peeled sorted\n"+movedCommit+" refs/tags/iteration_2\n")

	// A mismatch folder as the verifier writes it.
	real, err := frame.ReadASCIIFile(filepath.Join(f.lights, session.Dir, "level_01_attempt_01", "step_0001_final.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pred := real.Clone()
	pred.Set(10, 10, (real.At(10, 10)+1)%16)
	if _, err := frame.WriteMismatchArtifacts(filepath.Join(f.lights, "mismatch_frames"), real, pred); err != nil {
		t.Fatal(err)
	}

	c2, err := arcclient.New(arcclient.Options{Workspace: filepath.Join(dir, "trek-run")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Start(ctx, gs.URL, games.Trek.ID, api.OpenScorecardRequest{}); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "notes", "readme.txt"), "not a workspace")
	// A workspace outside the ARC folder, reachable only through links.
	writeFile(t, filepath.Join(f.outside, "client", "session", "level_01_attempt_01", "initial_frame.txt"), strings.Repeat(strings.Repeat("0", 64)+"\n", 64))
	writeFile(t, filepath.Join(f.outside, "agent", "transcript.jsonl"), `{"time":"2026-12-01T10:00:00Z","iteration":0,"kind":"prompt","name":"main","text":"OUTSIDE SECRET"}`+"\n")
	writeFile(t, filepath.Join(f.outside, "secret.txt"), "OUTSIDE SECRET")
	if err := os.Symlink(f.outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.outside, "client", "session", "level_01_attempt_01"), filepath.Join(f.lights, session.Dir, "level_07_attempt_01")); err != nil {
		t.Fatal(err)
	}
	// The region picture of the mismatch folder replaced by a link out.
	region := filepath.Join(f.lights, "mismatch_frames", "1", frame.MismatchRegionFile)
	if err := os.Remove(region); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(f.outside, "secret.txt"), region); err != nil {
		t.Fatal(err)
	}
	return f
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func serveARC(t *testing.T, dir string, o web.Options) *client {
	t.Helper()
	db, err := store.Open(context.Background(), store.MemoryPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	o.ARC = dir
	o.Log = log.New(io.Discard, "", 0)
	return serve(t, db, o)
}

// wantScore is the RHAE of the run's session as `evident arc score`
// computes it: the whole session read by arc/session, scored by arc/score.
func wantScore(t *testing.T, ws string) score.EnvironmentScore {
	t.Helper()
	s, err := session.Read(filepath.Join(ws, session.Dir))
	if err != nil {
		t.Fatal(err)
	}
	u, err := score.SessionUpdates(s)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := score.Environment(score.Replay(games.Lights.ID, u), games.Lights.Baselines)
	if !ok {
		t.Fatal("no run")
	}
	return e
}

var imgRE = regexp.MustCompile(`<img src="([^"]+)"`)

func TestARCView(t *testing.T) {
	f := newARCFixture(t)
	c := serveARC(t, f.dir, web.Options{})

	t.Run("the run list shows the workspaces and nothing else", func(t *testing.T) {
		body := c.ok("/arc")
		mustContain(t, body, `href="/arc/lights-run"`, `href="/arc/trek-run"`, "<code>lights-v1</code>", "<code>trek-v1</code>", "2 runs")
		for _, bad := range []string{"/arc/notes", "/arc/escape"} {
			if strings.Contains(body, bad) {
				t.Errorf("list links %s", bad)
			}
		}
	})

	t.Run("the overview's RHAE numbers are arc/score's", func(t *testing.T) {
		body := c.ok("/arc/lights-run")
		e := wantScore(t, f.lights)
		if len(e.Runs) != 1 || e.LevelsCompleted != 1 || e.Resets != 1 || e.Actions != len(f.level1)+55+2 {
			t.Fatalf("fixture score %+v", e)
		}
		mustContain(t, body, fmt.Sprintf(`data-score="%s">%.2f</strong>`, strconv.FormatFloat(e.Score, 'g', -1, 64), e.Score),
			fmt.Sprintf("%d levels completed · %d actions · %d resets · 1 runs", e.LevelsCompleted, e.Actions, e.Resets))
		r := e.Runs[0]
		for l, s := range r.LevelScores {
			mustContain(t, body, fmt.Sprintf(`<td>level %d</td><td class="num">%d</td><td class="num">%d</td><td class="num" data-score="%s">%.2f</td>`,
				l+1, r.LevelActions[l], r.LevelBaselineActions[l], strconv.FormatFloat(s, 'g', -1, 64), s))
		}
		// Level 1 in len(level1) actions against the baseline of 4.
		want1 := min(100*float64(4*4)/float64(len(f.level1)*len(f.level1)), 115)
		if r.LevelScores[0] != want1 {
			t.Errorf("level 1 score %v, want %v", r.LevelScores[0], want1)
		}
	})

	t.Run("the overview lists levels and attempts, and the transcript's stop", func(t *testing.T) {
		body := c.ok("/arc/lights-run")
		mustContain(t, body,
			`href="/arc/lights-run/attempts/level_01_attempt_01"`, `href="/arc/lights-run/attempts/level_02_attempt_01"`,
			`href="/arc/lights-run/attempts/level_02_attempt_02"`,
			fmt.Sprintf(`<td class="num">%d</td><td>NOT_FINISHED</td><td>LEVEL_COMPLETED</td>`, len(f.level1)),
			`<td class="num">55</td>`, "Stopped at iteration 2: no new steps after the stuck prompt", "Mismatch pictures</a> (1)")
		if strings.Contains(body, "level_07_attempt_01") {
			t.Error("the linked attempt folder outside the run is listed")
		}
	})

	t.Run("an attempt page shows each step's action and frame, intermediates as a strip", func(t *testing.T) {
		body := c.ok("/arc/lights-run/attempts/level_01_attempt_01")
		a := f.level1[0]
		mustContain(t, body, fmt.Sprintf("ACTION6 (x %d, y %d)", a.X, a.Y), fmt.Sprintf("click at column %d, row %d", a.X, a.Y),
			`src="/arc/lights-run/frames/level_01_attempt_01/initial_frame.png"`,
			`src="/arc/lights-run/frames/level_01_attempt_01/step_0001_final.png"`)
		last := len(f.level1)
		// Completing a Lights level answers two frames: the solved board
		// (recorded as intermediate _00) and the next level.
		mustContain(t, body, fmt.Sprintf(`src="/arc/lights-run/frames/level_01_attempt_01/step_%04d_intermediate_00.png"`, last),
			fmt.Sprintf(`aria-label="intermediate frames of step %d"`, last), "observed <strong>LEVEL_COMPLETED</strong>")
		imgs := imgRE.FindAllStringSubmatch(body, -1)
		if len(imgs) != last+2 {
			t.Errorf("%d images, want the initial frame, %d finals and one intermediate", len(imgs), last)
		}
		for _, m := range imgs {
			resp := c.get(m[1])
			if resp.status != 200 || resp.header.Get("Content-Type") != "image/png" {
				t.Fatalf("GET %s: %d %s", m[1], resp.status, resp.header.Get("Content-Type"))
			}
			img, err := png.Decode(strings.NewReader(resp.body))
			if err != nil || img.Bounds().Dx() != 512 || img.Bounds().Dy() != 512 {
				t.Fatalf("GET %s: not a 512×512 PNG: %v", m[1], err)
			}
		}
	})

	t.Run("a recorded PNG is served as recorded; without it the .txt is drawn by arc/frame", func(t *testing.T) {
		dir := filepath.Join(f.lights, session.Dir, "level_01_attempt_01")
		want, _ := os.ReadFile(filepath.Join(dir, "step_0001_final.png"))
		if got := c.get("/arc/lights-run/frames/level_01_attempt_01/step_0001_final.png"); got.body != string(want) {
			t.Error("the recorded PNG is not served byte for byte")
		}
		if err := os.Remove(filepath.Join(dir, "step_0002_final.png")); err != nil {
			t.Fatal(err)
		}
		g, err := frame.ReadASCIIFile(filepath.Join(dir, "step_0002_final.txt"))
		if err != nil {
			t.Fatal(err)
		}
		var wantPNG bytes.Buffer
		g.WritePNG(&wantPNG)
		got := c.get("/arc/lights-run/frames/level_01_attempt_01/step_0002_final.png")
		if got.status != 200 || got.body != wantPNG.String() {
			t.Errorf("drawn frame: %d, %d bytes, want arc/frame's %d", got.status, len(got.body), wantPNG.Len())
		}
		if got := c.get("/arc/lights-run/frames/level_01_attempt_01/step_0099_final.png"); got.status != 404 {
			t.Errorf("missing step: %d", got.status)
		}
	})

	t.Run("steps page by 50 with links both ways", func(t *testing.T) {
		p1 := c.ok("/arc/lights-run/attempts/level_02_attempt_01")
		mustContain(t, p1, "page 1 of 2", `href="/arc/lights-run/attempts/level_02_attempt_01?page=2" rel="next"`, `id="step-50"`)
		if strings.Contains(p1, `id="step-51"`) {
			t.Error("page 1 shows step 51")
		}
		p2 := c.ok("/arc/lights-run/attempts/level_02_attempt_01?page=2")
		mustContain(t, p2, "page 2 of 2", `id="step-51"`, `id="step-55"`, `href="/arc/lights-run/attempts/level_02_attempt_01" rel="prev"`)
		if strings.Contains(p2, `id="step-50"`) {
			t.Error("page 2 shows step 50")
		}
		if p := c.ok("/arc/lights-run/attempts/level_02_attempt_01?step=53"); !strings.Contains(p, `class="arc-step focus" id="step-53"`) {
			t.Error("?step=53 does not open its page with the step marked")
		}
		mustContain(t, c.ok("/arc/lights-run/attempts/level_02_attempt_02"), "Opened by <strong>RESET</strong>", "ACTION6 (x 12, y 40)")
	})

	t.Run("the transcript shows entries in file order, pages, and escapes a hostile prompt", func(t *testing.T) {
		p1 := c.ok("/arc/lights-run/transcript")
		mustContain(t, p1, "72 entries", "page 1 of 2", `href="/arc/lights-run/transcript?page=2" rel="next"`,
			"Play the game. &lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt;",
			"I will write the world model first.", "Predicting ACTION6 at 12,40.", "tool use Bash",
			"exit code <strong>0</strong> · 299.5 s", "agent session <code>thread-abc</code>",
			"level 2, attempt 1 (<a href=\"/arc/lights-run/attempts/level_02_attempt_01?page=last\">steps</a>)",
			"refused: RESET by the agent", "level 2 attempt 2 opened", "kind not in the transcript contract",
			"&#34;kind&#34;:&#34;mystery&#34;", "not a transcript entry", "this line is not JSON")
		if strings.Contains(p1, "<script>alert") || strings.Contains(p1, "<img src=x") {
			t.Fatal("the prompt's markup reached the page")
		}
		order := []string{"line 1<", "I will write", "Predicting", "exit code", "session read", "git snapshot", "refused", "controller sent RESET", "&#34;kind&#34;:&#34;mystery&#34;", "this line is not JSON", "event 00", "event 39"}
		last := -1
		for _, w := range order {
			i := strings.Index(p1, w)
			if i <= last {
				t.Fatalf("%q at %d, after %d: entries out of order", w, i, last)
			}
			last = i
		}
		if strings.Contains(p1, "event 40") {
			t.Error("page 1 holds more than 50 entries")
		}
		p2 := c.ok("/arc/lights-run/transcript?page=2")
		mustContain(t, p2, "event 40", "event 59", "stop: <strong>no new steps after the stuck prompt</strong>", `id="line-72"`)
		if strings.Contains(p2, "event 39") {
			t.Error("page 2 repeats page 1")
		}
	})

	t.Run("the transcript filters by kind and jumps to an iteration", func(t *testing.T) {
		p := c.ok("/arc/lights-run/transcript?kind=prompt")
		mustContain(t, p, "1 entries", "prompt <strong>main</strong>", `<option value="prompt" selected>prompt (1)</option>`)
		if strings.Contains(p, "session read") {
			t.Error("the kind filter lets other kinds through")
		}
		r := c.get("/arc/lights-run/transcript?iteration=2")
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/arc/lights-run/transcript#line-11" {
			t.Errorf("iteration jump: %d %q", r.status, r.header.Get("Location"))
		}
	})

	t.Run("snapshots come from the transcript, checked against the git tags", func(t *testing.T) {
		p := c.ok("/arc/lights-run/snapshots")
		mustContain(t, p, "2 snapshots", "<code>"+snapCommit1+"</code>", "<code>iteration_1</code>", "level_2 59 1",
			`<span class="ok">same commit</span>`, "now <code>"+movedCommit+"</code>", `href="/arc/lights-run/transcript?iteration=2"`)
	})

	t.Run("mismatch pictures are shown; a link leading out of the run is not served", func(t *testing.T) {
		p := c.ok("/arc/lights-run/mismatches")
		mustContain(t, p, "1 folders", `src="/arc/lights-run/mismatches/1/simulated_frame.png"`,
			`src="/arc/lights-run/mismatches/1/mismatch_as_magneta.png"`, `href="/arc/lights-run/mismatches/1/simulated_frame.txt"`)
		for _, u := range []string{"/arc/lights-run/mismatches/1/simulated_frame.png", "/arc/lights-run/mismatches/1/mismatch_as_magneta.png"} {
			r := c.get(u)
			if _, err := png.Decode(strings.NewReader(r.body)); r.status != 200 || err != nil {
				t.Errorf("GET %s: %d %v", u, r.status, err)
			}
		}
		if r := c.get("/arc/lights-run/mismatches/1/mismatch_region.png"); r.status != 404 || strings.Contains(r.body, "OUTSIDE") {
			t.Errorf("linked region picture: %d %q", r.status, r.body)
		}
	})

	t.Run("names that leave the ARC folder are refused", func(t *testing.T) {
		for _, u := range []string{
			"/arc/escape", "/arc/escape/transcript", "/arc/escape/frames/level_01_attempt_01/initial_frame.png",
			"/arc/..%2F..%2Fetc", "/arc/lights-run%2F..%2F..%2Fescape/transcript", "/arc/%2e%2e", "/arc/.git",
			"/arc/notes", "/arc/lights-run/attempts/..%2F..%2F..%2Fescape", "/arc/lights-run/attempts/level_07_attempt_01",
			"/arc/lights-run/frames/level_07_attempt_01/initial_frame.png",
			"/arc/lights-run/frames/level_01_attempt_01/..%2F..%2F..%2F..%2Fescape%2Fsecret.png",
			"/arc/lights-run/frames/..%2F..%2F..%2Fescape%2Fclient%2Fsession%2Flevel_01_attempt_01/initial_frame.png",
			"/arc/lights-run/mismatches/..%2F..%2F..%2Fescape/simulated_frame.txt",
			"/arc/lights-run/mismatches/1/..%2F..%2F..%2Fclient%2Fclient_state.json",
			"/arc/lights-run/mismatches/01/simulated_frame.txt",
		} {
			r := c.get(u)
			if r.status == 200 || strings.Contains(r.body, "OUTSIDE SECRET") {
				t.Errorf("GET %s: %d", u, r.status)
			}
			if r.status >= 300 && r.status < 400 {
				if loc := r.header.Get("Location"); strings.Contains(loc, "escape") || strings.HasPrefix(loc, "/arc/lights-run/..") {
					t.Errorf("GET %s redirects to %s", u, loc)
				}
			}
		}
	})
}

func TestARCViewSetup(t *testing.T) {
	t.Run("without --arc the view says how to start it", func(t *testing.T) {
		c := serveARC(t, "", web.Options{})
		mustContain(t, c.ok("/arc"), "started without <code>--arc</code>")
		if r := c.get("/arc/x"); r.status != 404 || !strings.Contains(r.body, "evident serve --arc DIR") {
			t.Errorf("run without a folder: %d", r.status)
		}
	})
	t.Run("a missing folder is an error at start naming it", func(t *testing.T) {
		db, _ := store.Open(context.Background(), store.MemoryPath)
		defer db.Close()
		dir := filepath.Join(t.TempDir(), "nope")
		if _, err := web.New(db, web.Options{ARC: dir}); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("a workspace given itself is the one run, named after its folder", func(t *testing.T) {
		ws := filepath.Join(t.TempDir(), "solo")
		writeFile(t, filepath.Join(ws, "agent", "transcript.jsonl"), `{"time":"2026-12-01T10:00:00Z","iteration":0,"kind":"stop","reason":"solved"}`+"\n")
		c := serveARC(t, ws, web.Options{})
		mustContain(t, c.ok("/arc"), `href="/arc/solo"`, "1 runs")
		mustContain(t, c.ok("/arc/solo"), "Stopped at iteration 0: solved", "No attempt recorded")
		if r := c.get("/arc/other"); r.status != 404 {
			t.Errorf("another name: %d", r.status)
		}
	})
	t.Run("with a token the ARC pages need a login like every page", func(t *testing.T) {
		ws := filepath.Join(t.TempDir(), "solo")
		writeFile(t, filepath.Join(ws, "evident_workspace.json"), "{}")
		c := serveARC(t, ws, web.Options{Token: "a-token-of-sixteen-bytes"})
		for _, u := range []string{"/arc", "/arc/solo", "/arc/solo/frames/level_01_attempt_01/initial_frame.png"} {
			if r := c.get(u); r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), "/login?next=") {
				t.Errorf("GET %s without login: %d %s", u, r.status, r.header.Get("Location"))
			}
		}
	})
}
