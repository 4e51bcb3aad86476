package persona

// JudgedReply is the reply_text this record judges, as its evidence cites it
// (spec persona.md "Evidence, summary, hedge"): the chat_turn.reply_text row
// without an aggregate that belongs to the record's own turn. Every verdict
// cites that row first, except 앞 회차를 기억 못 함, which cites the source
// turn's turn_id and reply_text before this turn's reply_text — so for a
// RecallFailed record it is the last such row, for every other verdict the
// first. ok is false when the record cites no such row or the cited reply was
// null (the row's value is not a string). The screen (web), the store and
// evalrun's endings read the reply through this one rule.
func (r *Record) JudgedReply() (reply string, ok bool) {
	pos := -1
	for i, e := range r.Evidence {
		if e.Source != SourceTurn || e.Field != "reply_text" || e.Agg != "" {
			continue
		}
		pos = i
		if r.Verdict != RecallFailed {
			break
		}
	}
	if pos < 0 {
		return "", false
	}
	s, ok := r.Evidence[pos].Value.(string)
	return s, ok
}
