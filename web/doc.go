// Package web is evident's screen for the character-card judge (spec
// persona.md "Screen"; seed 000): a server-rendered site, stdlib net/http
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
//	GET  /upload                 upload form (turn log, cards, lexicon; gold)
//	POST /upload                 multipart; imports and judges, then 303 to the new run
//	POST /gold                   multipart gold file (evalrun format); stored, 303 back
//	POST /datasets/{id}/judge    judge a stored dataset again (speech profile), 303 to the run
//	GET  /login, POST /login     only when a token is set
//	POST /logout
//	GET  /static/...             embedded CSS and script
//
// # Safety
//
// Without a token the server answers only requests whose Host is a loopback
// name or address (a guard against DNS rebinding), and CheckAddr refuses to
// listen on anything but loopback. With a token every page but /login and
// /static needs the auth cookie that /login sets after a constant-time
// comparison. Every POST carries a CSRF token derived (HMAC-SHA256 with a
// per-process random key) from the random per-browser session cookie, and
// cross-site POSTs (Origin or Sec-Fetch-Site) are refused. All text reaches
// the page through html/template, so a reply holding <script> is shown as
// text. Pages send a Content-Security-Policy that allows only this origin's
// CSS and script. Uploads are capped with http.MaxBytesReader
// (Options.MaxUpload) and imported all or nothing (runstore, Strict unless
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
package web
