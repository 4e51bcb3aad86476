// Package web is evident's screen for the character-card judge (spec
// persona.md "Screen"; seed 000), with a view of CRYSTAL score runs (see
// "CRYSTAL" below): a server-rendered site, stdlib net/http
// and html/template only, with its templates, CSS and the one small script
// embedded in the binary. Nothing is fetched from elsewhere.
//
// It owns the HTTP side: routes, pages, the upload form, the static report
// (WriteReport), the login and CSRF protection, and how verdicts are laid
// out — grouped by verdict in persona.Verdicts order with counts and shares,
// one row per turn (verdict · turn_id · summary) that opens into the evidence
// table, the rule values, the reply with the cited spans marked and the hedge;
// the ten automatic checks, self-grading against gold, the per-model panel and
// the verification notes beside them.
//
// It must not touch the rules: it decides no verdict, computes no rule value
// and parses no input cell. It reads runs, records, datasets and gold from the
// store; it judges only through persona/runstore, which goes through
// persona/batch; checks come from batch.Check (via runstore.Check) and the
// statistics from persona/evalrun. Marking a reply only finds, in the reply,
// strings the record already names (off_canon_entities, touched_term, and the
// sentence endings its summary quotes in 「」).
//
// # Routes
//
//	GET  /                       the latest run (or the upload form when the store is empty)
//	GET  /runs                   runs and datasets
//	GET  /runs/{id}              the screen; filters in the query string:
//	                             character, model, session, verdict, q (free text),
//	                             turn (one turn, opened), page
//	GET  /runs/{id}/disagree     prompts several models answered with different verdicts
//	                             (character filter honoured)
//	GET  /runs/{id}/report.html  the static report of WriteReport, as a download
//	GET  /runs/{id}/records.jsonl the run's records (same filters) as JSON Lines
//	GET  /runs/{id}/records.csv  the same as CSV for a spreadsheet (UTF-8 with BOM; export.go)
//	GET  /runs/{id}/review       303 to the first review queue
//	GET  /runs/{id}/review/forbidden  sample of 금지 소재 접촉 verdicts to confirm
//	GET  /runs/{id}/review/offcanon   off-canon names to add to the card or block
//	GET  /runs/{id}/review/endings    mixed-style replies, unknown finals and candidate endings
//	                             (?from=N on all three: compare with run N after a re-judge)
//	POST /runs/{id}/review/forbidden  turn, value confirm|reject, who
//	POST /runs/{id}/review/offcanon   character, name, value add|block, who
//	POST /runs/{id}/review/endings    ending, value add|skip, who; or turn, value seen, who
//	POST /runs/{id}/review/undo       decision (id), who
//	POST /review/who             remember the reviewer's name (cookie), 303 to back
//	GET  /review/decisions.jsonl every review decision, undone ones included
//	GET  /review/jobs/{n}        a re-judge's page: state, rows judged of the total, the new run
//	                             or the error; refreshes itself while queued or running
//	                             (?watch=1: goes on to the result once done; jobs.go)
//	GET  /review/jobs/{n}.json   the same as JSON (?after=V waits up to 20 s for a change)
//	POST /review/jobs/{n}/retry  judge a failed re-judge's decisions again, as a new job
//	GET  /upload                 upload form (turn log, cards, lexicon; gold)
//	POST /upload                 multipart; imports and judges, then 303 to the new run
//	POST /gold                   multipart gold file (evalrun format); stored, 303 back
//	POST /datasets/{id}/judge    judge a stored dataset again (speech profile), 303 to the run
//	GET  /crystal                CRYSTAL score runs and the form that scores an upload
//	POST /crystal/score          multipart refs, preds (several), images (several), name,
//	                             profile seed|paper; scored and kept in the store (db-N), 303 to the run
//	GET  /crystal/{run}          the paper-style table per model and the item × model index;
//	                             filters in the query string: model, outcome
//	                             (correct|wrong|missing|unparseable|unmatched), q, page
//	GET  /crystal/{run}/items/{id}?model=M  one item for one model: image, question, options,
//	                             verdict with its rule, steps side by side with the pairs linked
//	GET  /crystal/{run}/items/{id}/image    the item's image, from this origin
//	GET  /crystal/{run}/table.txt, table.json, items.jsonl  crystal/report's renderings
//	GET  /arc                    ARC agent runs: the workspaces of the --arc folder (see "ARC")
//	GET  /arc/{run}              the RHAE table, levels and attempts, transcript counts, the stop
//	GET  /arc/{run}/attempts/{attempt}  steps with action, frame and intermediate strip (page, step)
//	GET  /arc/{run}/frames/{attempt}/{file}.png  a session frame: the recorded PNG, else the .txt drawn
//	GET  /arc/{run}/transcript   agent/transcript.jsonl in file order (kind, page, iteration)
//	GET  /arc/{run}/snapshots    the snapshot entries, checked against the workspace's git tags (page)
//	GET  /arc/{run}/mismatches   mismatch_frames/N/ folders with their pictures (page)
//	GET  /arc/{run}/mismatches/{n}/{file}  simulated_frame.png|.txt, mismatch_region.png, mismatch_as_magneta.png
//	GET  /login, POST /login     only when a token is set
//	POST /logout
//	GET  /static/...             embedded CSS and script
//	GET  /static/fonts/...       the embedded Korean web font and its licence, cached a year (font.go)
//
// # Safety
//
// Without a token the server answers only requests whose Host is a loopback
// name or address (a guard against DNS rebinding), and CheckAddr refuses to
// listen on anything but loopback. A token must be at least MinTokenLength
// (16) characters; off loopback also MinTokenDistinct (8) distinct ones and
// no whitespace (CheckAddr, CheckAPIToken). With a token every page but /login and /static needs a live
// server-side session: /login compares the token in constant time, then
// issues a new session id (so one planted before login is worthless) and
// an auth cookie bound to it; the session ends at logout (a copied cookie
// pair stops working at once), after Options.SessionIdle without a request
// (default 12 h) or Options.SessionMaxAge after login (default 7 days), and
// at most MaxSessions are kept (the least recently used goes first). Wrong
// tokens, on /login and as the live API's bearer tokens together, are
// limited per client address (an IPv6 one by its /64; ratelimit.go):
// DefaultAuthFailuresPerMinute at once and then per minute, past which that
// address is answered 429 with Retry-After; past
// DefaultAuthFailuresAllPerMinute for all addresses together, so are those
// that gave no right token within TrustedClientFor. Every POST carries a CSRF token derived (HMAC-SHA256 with a
// per-process random key) from the random per-browser session cookie, and
// cross-site POSTs (Origin or Sec-Fetch-Site) are refused. All text reaches
// the page through html/template, so a reply holding <script> is shown as
// text. Pages send a Content-Security-Policy that allows only this origin's
// CSS, script, fonts and requests (app.js's upload with progress). Uploads are capped with http.MaxBytesReader
// (Options.MaxUpload), take one of MaxUploadsInFlight slots (one an
// address), must keep Options.UploadMinRate over each Options.UploadGrace
// or are cut with 408 (uploadpace.go), and are imported all or nothing (runstore, Strict unless
// the form asks to keep going without the rejected rows).
//
// # Decisions
//
//   - The automatic checks, the per-model report and the records behind them
//     are computed once per run and cached (runs never change after commit;
//     the four most recently viewed runs are kept). Gold agreement is
//     recomputed on each view, because gold labels can be added at any time.
//   - The checks, gold and per-model panels describe the whole run, whatever
//     the filter; the groups and their shares describe the filtered turns.
//   - Without a filter each group shows its first 50 rows and links to the
//     whole group; a group view pages by 200. The static report has no caps.
//   - Gold labels are keyed by turn_id in the store; the panel counts only
//     labels whose turn is in the shown run, and stays empty, with a
//     sentence saying why, when there are none (seed: no unsourced numbers on
//     a screen of predictions).
//
// # Review queues
//
// The seed's three manual checks ("[수동 검증]"), one page each per run.
// What a queue holds and what a decision does to the next judgement come
// from persona/runstore (ForbiddenSample, OffCanonNames, ReviewEndings,
// ApplyCanon, ApplyEnding); this package lays them out and stores the
// decisions (store.Decide, store.Undo) with who and when.
//
//   - Forbidden: up to 20 금지 소재 접촉 records, sampled by
//     sha256("{run id}:{turn_id}") (the 20 smallest), shown in run order: the
//     same run always shows the same 20. Decision key: turn_id; values
//     confirm ("a real problem for this character") and reject. Recorded
//     only; verdicts do not change.
//   - Off-canon: every name of off_canon_entities, grouped by character and
//     name, most turns first, with up to three example turns. Key
//     "character_id/name"; add puts the name in the card's canon_entities
//     (store.UpdateCard) and judges the dataset again with the run's profile
//     into a new run, and the browser goes there (?from= shows what changed);
//     block records the decision and keeps the name out of the card.
//   - Endings: the run's replies read with its own profile; a mixed reply has
//     both 존댓말 and 반말 sentences. Up to 20 are shown (same sampling),
//     each sentence with its last 어절; candidates are the last one and two
//     syllables of those 어절 in the 반말 sentences of all mixed replies,
//     ranked by how many sentences end so, with how many 반말 replies each
//     would turn 존댓말. Key: the ending; add judges again with the run's
//     endings plus it (stored as the new run's RunMeta.Endings), skip records.
//   - Undo marks the decision undone (never deleted); for off-canon names and
//     endings the card or profile is brought back in line with whatever
//     decision is now active for that key, judging again when that changes
//     something.
//   - Who: the form's who field, else the evident_who cookie, else
//     "creator"; every decision and undo remembers it in the cookie. The
//     decision forms carry the CSRF token like every other POST.
//   - A decision is stored in its request; the re-judge it calls for runs
//     in the background (jobs.go; issue 13: 28.7 s at 100k turns must not
//     hold a request). When the decision changes the card or the profile
//     (runstore.Pending), the POST answers at once with 303 to the job's
//     page (?watch=1), or 202 and the job's JSON for a caller whose Accept
//     names application/json; when it changes nothing, 303 back to the
//     queue as before (a script: 200 {"judged_again": false, "next": URL}).
//     The job page and its JSON show the state (queued, running, done,
//     failed), the rows judged of the total (the judge's own count through
//     runstore Options.Also, the total once its first pass has counted),
//     when it was received, started and ended, and the new run with the
//     ?from= comparison; the page refreshes itself every 2 s while queued
//     or running (the Refresh header: no script needed). Each review page
//     lists its run's jobs.
//   - At most one re-judge per source run runs at a time, and behind it at
//     most one waits: a decision on a run whose re-judge is running is
//     queued, and every later one is coalesced into that queued job, which
//     reads all their decisions when it starts and judges once
//     (runstore.Apply of a Plan). So decisions made in a row cost at most
//     two judgements, and the queued job's run has all of them. Jobs also
//     take the server's one-judge-at-a-time lock that uploads take; a job
//     waiting for it shows as queued.
//   - A failed re-judge keeps its decisions stored and puts back the cards
//     it had changed (runstore.Apply), so nothing of it is visible; its
//     page shows the error and a retry button (POST .../retry judges the
//     same decisions again even when nothing is left to change), or the
//     dataset can be judged again from the run list. Server.Close (called
//     by ListenAndServe after the HTTP server shut down) fails the queued
//     jobs and cancels the running ones: their run writers roll back, no
//     new run appears, the decisions stay. Jobs live in memory: the last
//     50 finished ones (maxFinishedJobs) are kept, queued and running ones
//     always; none survive a restart.
//
// # CRYSTAL
//
// The CRYSTAL view (spec crystal.md; issue 5 item 6) shows score runs of the
// reasoning-step scorer. It decides no score: every number comes from
// crystal.Evaluate through report.Score, and the pages lay out report.Table and
// the per-item crystal.ItemScore (verdict, Match with its pairs, Order, CPR).
// The rules it shows are the packages' too (issue 12 item 4): match
// acceptance (crystal.Match.Accepts), the nearest step of an unmatched one
// (crystal.ExplainSteps), the table's notes and formulas (report.Table.Notes,
// OrdF1Formula, CPRFormula, report.MatchRule), the upload's checks
// (report.ReadRuns, the same as `evident crystal score`'s) and image
// references (report.ResolveImage, internal/datauri). Files by role:
// crystal.go (runs held, handlers), crystal_view.go (page values),
// crystal_upload.go (the form), crystal_store.go (runs read from the store).
//
//   - At start the embedded sample (crystal/demo) is scored twice with the
//     lexical similarity and kept in memory: run "demo" (seed profile, the
//     numbers of crystal/demo/testdata/table_seed.golden) and "demo-paper".
//     Uploads through POST /crystal/score are saved in the store with the
//     images their items name (store.SaveCrystalRun, issue 16 item 3) and
//     listed, with the runs of `crystal score --db`, as db-N; they survive a
//     restart and are read one page at a time (crystal_store.go). Only on a
//     read-only store are uploads kept in memory instead (numbers 1, 2, …,
//     the ten most recent, gone after a restart).
//   - The screen scores with the lexical similarity only (word overlap, no
//     model): the embedding similarity needs a model directory and an onnx
//     build, which `evident crystal score` offers. Every page names the
//     similarity and the profile, and the table says lexical scores are not
//     comparable with the paper's.
//   - An upload is capped by Options.MaxUpload (all files together), checks
//     the CSRF token after reading its parts like /upload, and is all or
//     nothing: a references or predictions file that cannot be read (the
//     message names the file and line, from crystal/report), predictions of
//     which no id is in the references, or an image that is not PNG, JPEG,
//     GIF or WebP keeps nothing. Predictions without a model are named after
//     their file.
//   - Images are served from this origin only (the CSP allows no other):
//     the demo's embedded files, images uploaded with the run (matched to an
//     item's "image" by base name) or a base64 data URI in the references. An
//     http(s) image is not loaded; the page says why. SVG is never served.
//   - Per item, pairs are numbered and coloured in reference order (eight
//     colours, cycling), so a crossed order shows in the predicted column;
//     the pairs table also gives the greedy matcher's acceptance order. Each
//     matched step links to its partner (#ref-N ↔ #pred-N) with the
//     similarity (three decimals; the exact value in data-similarity). Each
//     unmatched step is marked and names its nearest step on the other side,
//     recomputed with the run's similarity (crystal.ExplainSteps): below the threshold, or already
//     taken by a pair with a higher similarity.
//   - The CRYSTAL pages are in English (the benchmark's language); the
//     layout, navigation and safety layers are the site's.
//
// # ARC
//
// The ARC view (issue 11 item 6; spec arc.md "The agent loop", "The
// controller, exactly") shows agent runs of ARC-AGI-3 games for audit. It
// decides nothing: the RHAE table is evident/arc/score's (SessionUpdates,
// Replay, Environment: what `evident arc score` prints), frames are the
// recorded PNGs or evident/arc/frame's drawing of the recorded .txt, the
// transcript is evident/arc/agent's Entry, the session layout
// evident/arc/session's names and metadata parser. The pages are in English.
//
//   - Options.ARC (evident serve --arc DIR) is an agent workspace (a folder
//     holding client/session, agent/transcript.jsonl or
//     evident_workspace.json), shown as one run named after the folder, or
//     a folder whose subfolders are workspaces, one run each; other
//     subfolders and hidden names are left out. The folder must exist when
//     the server starts.
//   - Every file is opened through an os.Root of the folder, opened again
//     for each request's run: no name in a URL reaches outside the run,
//     whether by "..", an encoded slash or a symbolic link (a link inside
//     the run that leads out of it is refused like a missing file). Run
//     names are single path elements; attempt, frame and mismatch names
//     must match the session layout's patterns exactly.
//   - Nothing loads a whole run: an attempt page reads the attempt folder's
//     names and the metadata of its 50 steps; frames are separate image
//     requests (lazy-loaded). The transcript is streamed line by line (a
//     line over agent.MaxTranscriptLine is shown as an error, not kept); a
//     page keeps 50 entries, each text field cut at 64 KiB with the number
//     of bytes left out. Snapshots page by 100, mismatch folders by 20, runs
//     by 100. ?page=last opens the last page; ?step=K the page of step K;
//     ?iteration=N answers 303 to the page of that iteration's first entry.
//   - The RHAE is computed from the metadata files only (never the frames):
//     each attempt's initial metadata and its steps', with a step that lacks
//     its final frame right after a GAME_OVER step left out as
//     session.ReadAttempt leaves it out; that is everything
//     score.SessionUpdates reads. It is recomputed on each view of the run
//     (a run in progress grows). Baselines are the built-in game's
//     (client/client_state.json names the game); for any other game the
//     table shows arc/score's "not available" message and 0, as `evident arc
//     score` without --baseline refuses to guess.
//   - Transcript entries are shown by kind; a kind outside the contract, and
//     a line that is not an entry, are shown raw (the final partial line of
//     a transcript being written is left out, as agent.ParseTranscript does).
//     An agent_event shows the text of Codex `exec --json` items
//     (agent_message, reasoning, command_execution command and output) and
//     of Claude Code stream-json messages (text, tool use, result) above the
//     indented event; other events show as JSON only.
//   - Git snapshots are the transcript's snapshot entries. The workspace's
//     .git is read, not run (its config is not trusted): each tag is looked
//     up in .git/refs/tags and .git/packed-refs and marked "same commit" or
//     "now <commit>".
//   - Mismatch folders are shown as numbered; which step a folder belongs to
//     is not recorded in it (the verifier's report, in the transcript's
//     agent events, names it). The region and magenta views need the real
//     frame and are served only as recorded; the simulated frame is drawn
//     from its .txt when its PNG is missing.
//   - Images are served from this origin with Content-Type image/png and
//     only when they start with the PNG signature; recorded PNGs are capped
//     at 16 MiB, metadata at 1 MiB, the client state at 16 MiB.
package web
