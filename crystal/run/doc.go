// Package run asks a vision-language model the CRYSTAL questions and writes
// its raw replies as a predictions file for evident/crystal/report (issue 5
// item 4; spec /work/shared/spec/crystal.md "Prompt and parsing"; seed 002).
//
// For each item it sends the call the benchmark's authors made (Request): the
// seed's system prompt crystal.SystemPrompt, temperature crystal.Temperature
// (0.1), and one user message with the image as a data URI and the question
// with its options as "A) …" lines (Prompt). When the server refuses the
// image as too large (TooLarge) it tries once more with the image downscaled
// to at most crystal.RetryMaxImageSide (1024) pixels on its longer side
// (Shrink, Downscale). Replies are written unparsed, one JSON line
// {"id", "model", "reply", …} per item (Line), which `evident crystal score
// --preds` reads with crystal.ParseReply — so a garbage reply is kept and
// flagged unparseable by the scorer, never dropped here.
//
// Run bounds the items in flight (Config.Concurrency), spaces requests
// (Config.RPS, a token bucket of capacity 1), skips ids already answered
// (Config.Skip, from OpenPreds: resume) and reports each item (Config.Done)
// and a Tally. Retries on 429 (Retry-After honoured), 5xx, timeouts and
// connection errors belong to the llm.Client it is given — normally llm.Wrap
// around llm.NewOpenAI — not to this package.
//
// It owns calling and writing only: no scoring (evident/crystal), no file
// formats of references (evident/crystal/report.ReadItems), no command line.
// Standard library plus evident/llm and evident/crystal.
//
// # Decisions
//
//   - Too-large detection (TooLarge): an *llm.APIError with status 413, or
//     another 4xx except 408/429 whose message names the image and a size.
//     The retry is made only when the image is larger than the limit (else
//     it would send the same picture) and can be decoded by the standard
//     library (PNG, JPEG, GIF; not WebP or BMP); otherwise the item fails
//     with both reasons. An http(s) image URL is passed through and never
//     downscaled. (crystal's constants speak of "one retry on failure"; the
//     retry for other failures is the client's policy, which sends the same
//     image.)
//   - Downscaling is an area average on premultiplied RGBA written here
//     (golang.org/x/image is not a dependency): exact for a reduction, which
//     is all the retry does. A JPEG is re-encoded as JPEG (quality 90),
//     anything else as PNG.
//   - Failed items are not written, so a rerun with the same output file
//     retries exactly those; a refused or empty answer is written with an
//     empty reply and a note (it is the model's answer, scored as
//     unparseable), so it is not asked again.
//   - Resume counts a record as answered when its model is this run's model
//     or it has none; a torn last line (no newline, not JSON) is cut off.
//   - Lines are written in the order items finish, one Write per line;
//     the scorer does not care about order.
//   - An item without an image is sent as text only.
package run
