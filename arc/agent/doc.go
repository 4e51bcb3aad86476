// Package agent is evident's controller for an external coding agent playing
// one ARC-AGI-3 game in an evident workspace (issue 11; spec arc.md "The
// agent loop", "The controller, exactly"): a state machine with no model of
// its own that chooses each prompt from an inspection of the workspace's
// client/session, snapshots the workspace with git every iteration and
// writes every prompt, agent event, turn, inspection, refusal, snapshot,
// RESET and stop to WORKSPACE/agent/transcript.jsonl.
package agent
