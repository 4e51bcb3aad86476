package crystal

// SystemPrompt is the seed's system prompt verbatim (seed 002, the Python
// triple-quoted string, including its leading and trailing newline). It is
// the output contract that ParseReply reads: a JSON object
// {"reasoning_steps": [...], "answer": "..."}.
const SystemPrompt = `
You are a vision-language model. Analyze the provided image(s) and user text silently.
Return ONLY a valid JSON object with this schema:
{"reasoning_steps": [], "answer": ""}

Rules for "reasoning_steps":
- Include enough steps to make the answer evident without filler.
- Write single-clause sentences, each adding a new, directly checkable fact.
- No multi-sentence items. No internal monologue.

Rules for "answer":
- Ground strictly in visible content and given text.
- Multiple-choice: return only the best LETTER (e.g., "B").
- Numeric: include units.
`

// Call parameters the benchmark's authors used (spec crystal.md "Prompt and
// parsing"): one user message with the question text and the image as a data
// URI, temperature Temperature; on failure one retry with the image
// downscaled so that its longer side is at most RetryMaxImageSide pixels.
const (
	Temperature       = 0.1
	RetryMaxImageSide = 1024
)
